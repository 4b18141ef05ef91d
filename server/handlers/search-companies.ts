import { startCompanySearch } from './company-search.ts';
import type { Handler } from './types.ts';

/** Companies matching the filters, with the CNAE codes the activity terms stood for. */
export const searchCompanies: Handler<'searchCompanies'> = async (input, ctx) => {
  const run = await startCompanySearch(input, ctx);
  const results = [];
  const sources = [];
  for await (const page of run.pages) {
    results.push(...page.results);
    sources.push({ source: page.source, count: page.results.length, ...(page.error ? { error: page.error } : {}) });
  }
  return { results, activities: run.activities, nameTerms: run.nameTerms, sources };
};
