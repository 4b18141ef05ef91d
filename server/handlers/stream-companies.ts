import { startCompanySearch } from './company-search.ts';
import type { Handler, StreamEvent } from './types.ts';

/** The company search as server-sent events: a `page` per source, then `done` with the totals. */
export const streamCompanies: Handler<'streamCompanies'> = (input, ctx) =>
  (async function* (): AsyncGenerator<StreamEvent> {
    const run = await startCompanySearch(input, ctx);
    let total = 0;
    const sources = [];
    for await (const page of run.pages) {
      if (ctx.signal.aborted) return;
      total += page.results.length;
      sources.push({ source: page.source, count: page.results.length, ...(page.error ? { error: page.error } : {}) });
      yield { event: 'page', data: { source: page.source, results: page.results } };
    }
    yield { event: 'done', data: { total, sources, activities: run.activities, nameTerms: run.nameTerms } };
  })();
