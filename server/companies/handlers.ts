/** Companies: search (plain and streamed) and the CNPJ batch lookup, on the imported registry and BrasilAPI. */
import { checkCnpj } from '../../shared/cnpj.ts';
import type { StreamEventOf } from '../../shared/operations/index.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import { holdsRaw } from '../lib/raw-json.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import { companyView, REGISTRY_SOURCE, type CompanyRecord, type CompanyView } from './company-record.ts';
import type { Companies } from './companies.ts';
import { startCompanySearch } from './company-search.ts';
import type { SearchCursors } from './search-cursors.ts';

const MAX_NAMED = 5;

/**
 * What the batch asks of a source outside the registry (BrasilAPI's client in providers/ is one):
 * declared here, so companies/ needs nothing of providers/, which imports companies/.
 */
export interface RemoteCompanies {
  /** The company with this normalized CNPJ, or null when the source does not know it; fails with a ServiceError when the source does. */
  lookup(cnpj: string, signal?: AbortSignal, trace?: TraceContext): Promise<CompanyRecord | null>;
}

export interface CompanyDeps {
  companies: Companies;
  /** Where each search page left off. */
  searchCursors: SearchCursors;
  /** BrasilAPI, for CNPJs the registry lacks; null unless BRASILAPI_ENABLED. */
  remoteCompanies: RemoteCompanies | null;
  /** BRASILAPI_LOOKUPS_PER_REQUEST. */
  lookupsPerRequest: number;
}

export function createCompanyHandlers({ companies, searchCursors, remoteCompanies, lookupsPerRequest }: CompanyDeps) {
  /**
   * Up to 500 CNPJs: malformed identifiers are a 400 naming them, valid-looking ones with wrong
   * check digits go to `invalid`, the first occurrence of a duplicate is kept, and only companies
   * found are charged. The imported registry answers first; BrasilAPI, when enabled, some of the rest.
   */
  const lookupCnpjBatch: Handler<'lookupCnpjBatch'> = async ({ cnpjs }, ctx) => {
    const malformed: string[] = [];
    const valid: string[] = [];
    const invalid: string[] = [];
    const seen = new Set<string>();
    cnpjs.forEach((input, i) => {
      const check = checkCnpj(input);
      if (check.status === 'malformed') {
        malformed.push(`cnpjs[${i}] ${JSON.stringify(input.slice(0, 40))}`);
        return;
      }
      if (seen.has(check.cnpj)) return;
      seen.add(check.cnpj);
      (check.status === 'valid' ? valid : invalid).push(check.cnpj);
    });
    if (malformed.length > 0) {
      const named = malformed.slice(0, MAX_NAMED).join(', ');
      const more = malformed.length > MAX_NAMED ? ` and ${malformed.length - MAX_NAMED} more` : '';
      throw new ServiceError('invalid_cnpj',
        `${named}${more}: not a CNPJ (14 characters, letters or digits then 2 check digits; punctuation allowed)`,
      );
    }

    // Over HTTP, the registry's companies are their stored JSON, passed through unparsed (server/lib/raw-json.ts).
    const found = await companies.views(valid, ctx.rawJson);
    const sources: Array<{ source: string; count: number; checked?: number; error?: string }> = [
      { source: REGISTRY_SOURCE, count: found.size },
    ];
    if (remoteCompanies) {
      const missing = valid.filter((cnpj) => !found.has(cnpj));
      sources.push(await lookUpRemotely(remoteCompanies, missing.slice(0, lookupsPerRequest), found, ctx));
    }

    const results = valid.flatMap((cnpj) => found.get(cnpj) ?? []);
    await ctx.charge(results.length, `${results.length} of ${valid.length} CNPJs found`);
    const answer = { results, notFound: valid.filter((cnpj) => !found.has(cnpj)), invalid, sources, creditsCharged: ctx.creditsCharged };
    return ctx.rawJson ? holdsRaw(answer) : answer;
  };

  /** Companies matching the filters, with the CNAE codes the activity terms stood for. */
  const searchCompanies: Handler<'searchCompanies'> = async (input, ctx) => {
    const start = await searchCursors.start<{ after: string }>(ctx.workspaceId, 'searchCompanies', input);
    const run = await startCompanySearch(input, { companies, charge: ctx.charge }, {
      after: start.position?.after,
      room: start.room,
    });
    const results = [];
    const sources = [];
    for await (const page of run.pages) {
      results.push(...page.results);
      sources.push({ source: page.source, count: page.results.length, ...(page.error ? { error: page.error } : {}) });
    }
    const position = run.more === null ? null : { after: run.more };
    const nextCursor = await searchCursors.next(ctx.workspaceId, 'searchCompanies', input, start.sent + results.length, position);
    return { results, activities: run.activities, nameTerms: run.nameTerms, sources, nextCursor, creditsCharged: ctx.creditsCharged };
  };

  /** The company search as server-sent events: a `page` per source, then `done` with the totals. */
  const streamCompanies: Handler<'streamCompanies'> = (input, ctx) =>
    (async function* (): AsyncGenerator<StreamEventOf<'streamCompanies'>> {
      const run = await startCompanySearch(input, { companies, charge: ctx.charge });
      let total = 0;
      const sources = [];
      for await (const page of run.pages) {
        if (ctx.signal.aborted) return;
        total += page.results.length;
        sources.push({ source: page.source, count: page.results.length, ...(page.error ? { error: page.error } : {}) });
        yield { event: 'page', data: { source: page.source, results: page.results } };
      }
      yield { event: 'done', data: { total, sources, activities: run.activities, nameTerms: run.nameTerms, creditsCharged: ctx.creditsCharged } };
    })();

  return { lookupCnpjBatch, searchCompanies, streamCompanies };
}

/**
 * BrasilAPI allows about one call a second, so only the first few CNPJs the registry lacks are
 * asked for (BRASILAPI_LOOKUPS_PER_REQUEST); the rest stay in `notFound`, and `sources` says
 * how many were checked. A failure of BrasilAPI leaves its CNPJs not found rather than failing
 * the companies the registry did find.
 */
async function lookUpRemotely(
  remote: RemoteCompanies,
  cnpjs: string[],
  found: Map<string, CompanyView>,
  { signal, log, trace }: Pick<HandlerContext, 'signal' | 'log' | 'trace'>,
) {
  const answers = await Promise.allSettled(cnpjs.map((cnpj) => remote.lookup(cnpj, signal, trace)));
  let count = 0;
  let error: string | undefined;
  answers.forEach((answer, i) => {
    if (answer.status === 'rejected') {
      error ??= answer.reason instanceof ServiceError ? answer.reason.message : 'BrasilAPI lookup failed';
      if (!(answer.reason instanceof ServiceError)) log.warn({ err: answer.reason }, 'brasilapi lookup failed');
    } else if (answer.value) {
      found.set(cnpjs[i]!, companyView(answer.value, 'brasilapi'));
      count++;
    }
  });
  return { source: 'brasilapi', count, checked: cnpjs.length, ...(error ? { error } : {}) };
}
