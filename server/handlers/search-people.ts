import { assemble, startPeopleSearch, type SourceAnswer } from '../people/people-search.ts';
import type { Handler } from './types.ts';

/** People from every source at once, merged, in `sourceOrder`; 1 credit per row returned. */
export const searchPeople: Handler<'searchPeople'> = async (input, ctx) => {
  const run = await startPeopleSearch(input, ctx);
  const answers: SourceAnswer[] = [];
  for await (const answer of run.answers) answers.push(answer);
  const { results, sources } = assemble(answers, run.sources, run.limit);
  await ctx.charge(results.length, `${results.length} people`);
  return { results, sources };
};
