/** People: search (plain and streamed) over every source, and hydrate through the cascade. */
import type { StreamEventOf } from '../../shared/operations/index.ts';
import type { Attempt } from '../enrich/cascade.ts';
import { allFailed, cleanKnown, enrichRecord } from '../enrich/enrich-record.ts';
import { NOTHING_RECALLED, recalledRecord, remember } from '../enrich/memory-answer.ts';
import { DEFAULT_MAX_AGE_SECONDS, type EnrichMemory, type MemoryKey } from '../enrich/memory.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import { ENRICH_FIELDS, isField, present, type Field, type FieldValues } from '../providers/fields.ts';
import { assemble, startPeopleSearch, type PeoplePosition, type PeopleSearchRun, type SourceAnswer } from './people-search.ts';
import type { People } from './people.ts';
import { PeopleMerge } from './person-view.ts';
import type { Providers } from '../providers/providers.ts';
import type { Companies } from '../companies/companies.ts';
import type { SearchCursors } from '../companies/search-cursors.ts';
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
  /** What enrichments found, per workspace: hydrate answers from it as enrich does. */
  memory: EnrichMemory;
}

export function createPeopleHandlers({ people, companies, providers, searchCursors, memory }: PeopleDeps) {
  /**
   * Up to 25 leads through the cascade at once. A lead counts as enriched when at least one field
   * was added; it is charged (the registry's price per lead) when the cascade added one now. Each
   * lead goes through the workspace's enrichment memory as `enrich` does: within `maxAge` (and
   * without `forceRefresh`) a person already paid for is answered from it, `cached`, free and
   * calling nobody; a stored answer that lacks fields runs the cascade for those alone. With
   * `maxCredits` (or a low balance) no more leads are started than could still be paid for: a lead
   * that comes back with nothing paid frees its place.
   */
  const hydratePeople: Handler<'hydratePeople'> = async ({ leads, maxCredits, maxAge: asked, forceRefresh }, ctx) => {
    const knowns = leads.map((lead, i) => cleanKnown(knownOf(lead), `leads[${i}].cnpj`));
    const slots = await providers.forWorkspace(ctx.workspaceId);
    const perLead = ctx.price(1);
    const spendable = await ctx.budget(maxCredits);
    if (leads.length > 0) spendable.requireBalanceFor(perLead, 'a lead enriched');
    /** Leads that may still be started: the ones the budget could pay for. */
    let budget = perLead > 0 ? Math.floor(spendable.credits / perLead) : leads.length;
    const results: HydratedLead[] = leads.map((lead) => ({ ...lead, enriched: false }));
    const maxAge = forceRefresh ? 0 : (asked ?? DEFAULT_MAX_AGE_SECONDS);
    let paid = 0;
    /** Subjects whose new fields this request stored: forgotten if it cannot charge for them. */
    const storedNow: MemoryKey[] = [];

    /** One lead; `id` names its subject in the memory (null: it has no identifier to be known by). */
    const hydrate = async (i: number, id: MemoryKey | null): Promise<void> => {
      const known = knowns[i]!;
      // Every field is wanted, but for those the lead brings.
      const wanted = ENRICH_FIELDS.filter((f) => known[f] === undefined);
      const remembered = id !== null && maxAge > 0;
      const recall = remembered ? await memory.recall(id, ctx.workspaceId, wanted, maxAge) : NOTHING_RECALLED;
      if (remembered && recall.covered.length === wanted.length) {
        const { record, sources } = recalledRecord(known, recall);
        budget++; // free: its place goes to another lead
        results[i] = { ...leads[i], ...record, enriched: Object.values(sources).some((s) => s !== 'input'), sources, providers: [], cached: true, enrichedAt: (recall.enrichedAt ?? new Date()).toISOString() };
        return;
      }
      const stored = Object.fromEntries(Object.entries(recall.fields).map(([f, s]) => [f, s!.value])) as FieldValues;
      const missing = wanted.filter((f) => !recall.covered.includes(f));
      const result = await enrichRecord({ known: { ...stored, ...known }, goalFields: missing, budget: Infinity }, slots, ctx);
      const enrichedAt = new Date();
      if (id !== null) await remember(memory, id, ctx.workspaceId, result, missing, slots, enrichedAt);
      const { sources: recalled } = recalledRecord(known, recall);
      const sources = { ...result.sources };
      for (const [field, source] of Object.entries(recalled)) if (source !== 'input' && sources[field as Field] === 'input') sources[field as Field] = source;
      // What was sent or stored went in as known (`input`): only what the cascade found now is paid for.
      if (Object.values(result.sources).some((s) => s !== 'input')) {
        paid++;
        if (id !== null) storedNow.push(id);
      } else budget++;
      results[i] = {
        ...leads[i],
        ...result.record,
        enriched: Object.values(sources).some((s) => s !== 'input'),
        sources,
        providers: result.attempts,
        cached: false,
        enrichedAt: enrichedAt.toISOString(),
      };
    };

    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < leads.length && budget > 0 && !ctx.signal.aborted) {
        const i = next++;
        budget--; // this lead's price, given back if it is not paid for
        const id = memory.keyOf(ctx.workspaceId, knowns[i]!);
        // Identical people at once call the providers once: the others wait, then read what it stored.
        await (id !== null && maxAge > 0 ? memory.exclusive(id, ctx.workspaceId, () => hydrate(i, id), ctx.signal) : hydrate(i, id));
      }
    };
    // One worker per lead: the schema caps a request at 25.
    await Promise.all(Array.from({ length: leads.length }, worker));

    const enriched = results.filter((r) => r.enriched).length;
    const skipped = results.filter((r) => !('providers' in r)).length;
    const attempts = results.filter((r) => r.cached !== true).map((r) => r.providers as Attempt[] | undefined);
    if (attempts.length > 0 && attempts.every((a) => a !== undefined && allFailed(a))) {
      throw new ServiceError('provider_unavailable', 'Every provider failed for every lead');
    }
    let charged: number;
    try {
      charged = await ctx.charge(paid, `${paid} of ${leads.length} leads enriched`);
    } catch (err) {
      // Not paid for (the balance ran out meanwhile): what was stored must not be given free later.
      await Promise.all(storedNow.map((id) => memory.forget(id, ctx.workspaceId)));
      throw err;
    }
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
    return { results, sources, nextCursor, creditsCharged: ctx.creditsCharged };
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
      yield { event: 'done', data: { total: merge.rows.length, sources, creditsCharged: ctx.creditsCharged } };
    })();

  return { hydratePeople, searchPeople, streamPeople };
}
