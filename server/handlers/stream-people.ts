import { PeopleMerge } from '../people/person-view.ts';
import { startPeopleSearch } from '../people/people-search.ts';
import type { Handler, StreamEvent } from './types.ts';

/**
 * The people search as server-sent events: a `page` per source as it finishes, holding only the
 * people not sent yet, each page charged before it goes out. Once `limit` people are out, the
 * sources still working are cancelled; so is everything when the client leaves.
 */
export const streamPeople: Handler<'streamPeople'> = (input, ctx) =>
  (async function* (): AsyncGenerator<StreamEvent> {
    const run = await startPeopleSearch(input, ctx);
    const merge = new PeopleMerge();
    const sources = [];
    for await (const answer of run.answers) {
      if (ctx.signal.aborted) return;
      const fresh = [];
      for (const row of answer.rows) {
        if (merge.rows.length === run.limit) break;
        const added = merge.add(row);
        if (added) fresh.push(added);
      }
      sources.push({ source: answer.source, count: fresh.length, ...(answer.error ? { error: answer.error } : {}) });
      await ctx.charge(fresh.length, `${fresh.length} people from ${answer.source}`);
      yield { event: 'page', data: { source: answer.source, results: fresh } };
      if (merge.rows.length === run.limit) run.cancel();
    }
    yield { event: 'done', data: { total: merge.rows.length, sources } };
  })();
