/** People: search (plain and streamed) over every source, and hydrate through the cascade. */
import type { StreamEventOf } from '../../shared/operations/index.ts';
import type { Attempt } from '../enrich/cascade.ts';
import { allFailed, cleanKnown, enrichRecord } from '../enrich/enrich-record.ts';
import { ServiceError } from '../errors.ts';
import type { Handler, HandlerContext } from '../pipeline/handler.ts';
import { isField, present, type FieldValues } from '../providers/fields.ts';
import { assemble, startPeopleSearch, type PeoplePosition, type PeopleSearchRun, type SourceAnswer } from './people-search.ts';
import type { People } from './people.ts';
import { PeopleMerge } from './person-view.ts';
import type { Providers } from '../providers/providers.ts';
import type { Companies } from '../companies/companies.ts';
import type { SearchCursors } from '../search-cursors.ts';
import type { HydratedLead } from '../../shared/types.ts';

/** Names a search row or a sheet may use for the cascade's fields. */
const ALIASES: Record<string, string> = {
  name: 'fullName',
  company: 'companyName',
  domain: 'companyDomain',
  website: 'companyDomain',
  linkedin: 'linkedinUrl',
  jobTitle: 'title',
};

function knownOf(lead: Record<string, unknown>): FieldValues {
  const known: FieldValues = {};
  for (const [key, value] of Object.entries(lead)) {
    const field = ALIASES[key] ?? key;
    if (isField(field) && (typeof value === 'string' || typeof value === 'number') && known[field] === undefined) {
      known[field] = typeof value === 'string' ? value.trim() : value;
    }
  }
  return present(known);
}

export interface PeopleDeps {
  people: People;
  companies: Companies;
  /** The data providers, with each workspace's own keys. */
  providers: Providers;
  /** Where each search page left off. */
  searchCursors: SearchCursors;
}

export function createPeopleHandlers({ people, companies, providers, searchCursors }: PeopleDeps) {
  /**
   * Up to 25 leads through the cascade at once. A lead counts as enriched, and is charged (the
   * registry's price per lead), when the cascade added at least one field. With `maxCredits` (or a
   * low balance) no more leads are started than could still be paid for: a lead that comes back
   * with nothing frees its place.
   */
  const hydratePeople: Handler<'hydratePeople'> = async ({ leads, maxCredits }, ctx) => {
    const knowns = leads.map((lead, i) => cleanKnown(knownOf(lead), `leads[${i}].cnpj`));
    const slots = await providers.forWorkspace(ctx.workspaceId);
    const perLead = ctx.price(1);
    const spendable = await ctx.budget(maxCredits);
    if (leads.length > 0) spendable.requireBalanceFor(perLead, 'a lead enriched');
    /** Leads that may still be started: the ones the budget could pay for. */
    let budget = perLead > 0 ? Math.floor(spendable.credits / perLead) : leads.length;
    const results: HydratedLead[] = leads.map((lead) => ({ ...lead, enriched: false }));

    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < leads.length && budget > 0 && !ctx.signal.aborted) {
        const i = next++;
        budget--; // this lead's price, given back if it comes back with nothing
        const known = knowns[i]!;
        const result = await enrichRecord({ known, budget: Infinity }, slots, ctx);
        const added = Object.keys(result.record).filter((f) => result.sources[f as keyof typeof result.sources] !== 'input');
        if (added.length === 0) budget++;
        results[i] = {
          ...leads[i],
          ...result.record,
          enriched: added.length > 0,
          sources: result.sources,
          providers: result.attempts,
        };
      }
    };
    // One worker per lead: the schema caps a request at 25.
    await Promise.all(Array.from({ length: leads.length }, worker));

    const enriched = results.filter((r) => r.enriched).length;
    const skipped = results.filter((r) => !('providers' in r)).length;
    const attempts = results.map((r) => r.providers as Attempt[] | undefined);
    if (leads.length > 0 && attempts.every((a) => a !== undefined && allFailed(a))) {
      throw new ServiceError('provider_unavailable', 'Every provider failed for every lead');
    }
    const charged = await ctx.charge(enriched, `${enriched} of ${leads.length} leads enriched`);
    return { results, enriched, creditsCharged: charged, ...(skipped ? { notProcessed: skipped } : {}) };
  };

  /** The search over this workspace's sources, with what they read. */
  async function peopleSearch(
    input: Parameters<typeof startPeopleSearch>[0],
    ctx: HandlerContext,
    page?: Parameters<typeof startPeopleSearch>[2],
  ): Promise<PeopleSearchRun> {
    const slots = await providers.forWorkspace(ctx.workspaceId);
    return startPeopleSearch(input, { workspaceId: ctx.workspaceId, people, companies, slots, log: ctx.log, signal: ctx.signal, trace: ctx.trace }, page);
  }

  /**
   * People from every source at once, merged, in `sourceOrder`, a page at a time; 1 credit per
   * row returned. Each source continues from where it stopped on the previous page.
   */
  const searchPeople: Handler<'searchPeople'> = async (input, ctx) => {
    const start = await searchCursors.start<PeoplePosition>(ctx.workspaceId, 'searchPeople', input);
    const run = await peopleSearch(input, ctx, { position: start.position, room: start.room });
    const answers: SourceAnswer[] = [];
    for await (const answer of run.answers) answers.push(answer);
    const { results, sources, next } = assemble(answers, run.sources, run.limit, start.position);
    await ctx.charge(results.length, `${results.length} people`);
    // A page of repeats only (people given earlier) still moves on; one that moved nowhere ends the search.
    const moved = next !== null && (results.length > 0 || JSON.stringify(next.sources) !== JSON.stringify(start.position?.sources ?? {}));
    const nextCursor = await searchCursors.next(ctx.workspaceId, 'searchPeople', input, start.sent + results.length, moved ? next : null);
    return { results, sources, nextCursor };
  };

  /**
   * The people search as server-sent events: a `page` per source as it finishes, holding only the
   * people not sent yet, each page charged before it goes out. Once `limit` people are out, the
   * sources still working are cancelled; so is everything when the client leaves.
   */
  const streamPeople: Handler<'streamPeople'> = (input, ctx) =>
    (async function* (): AsyncGenerator<StreamEventOf<'streamPeople'>> {
      const run = await peopleSearch(input, ctx);
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

  return { hydratePeople, searchPeople, streamPeople };
}
