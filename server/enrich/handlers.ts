/** Cascade enrichment of one record (`POST /api/enrich`), with the workspace's enrichment memory. */
import { ENRICH_IDENTIFIERS } from '../../shared/schemas/enrichment.ts';
import type { OutputOf } from '../../shared/operations/index.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import { ENRICH_FIELDS, hasValue, type Field, type FieldValues, type FoundFields } from '../providers/fields.ts';
import type { Providers, ProviderSlot } from '../providers/providers.ts';
import { allFailed, cleanKnown, enrichRecord } from './enrich-record.ts';
import { DEFAULT_MAX_AGE_SECONDS, type EnrichMemory, type Recall, type StoredField } from './memory.ts';
import { NOTHING_RECALLED, recalledRecord, remember } from './memory-answer.ts';
import { noProviderHint } from './no-provider-hint.ts';
import { parseProviderOrder } from './provider-order.ts';

type EnrichAnswer = OutputOf<'enrich'>;

export interface EnrichDeps {
  /** What enrichments found, per workspace. */
  memory: EnrichMemory;
  /** The data providers, with each workspace's own keys. */
  providers: Providers;
}

export function createEnrichHandlers({ memory, providers }: EnrichDeps) {
  /**
   * Within `maxAge` (and without `forceRefresh`), the wanted fields the workspace already paid for
   * come from its memory: all of them → the stored answer, charged 0, nobody called; some → the
   * cascade runs for the others only, starting from what is stored, and charges only those.
   * Otherwise, charges the providers that returned data, once, even when the client has gone by
   * then: their data was paid for. A provider failure is an outcome in `providers`; only when
   * every provider reached failed is the answer 503.
   */
  const enrich: Handler<'enrich'> = async (input, ctx) => {
    const known: FieldValues = {};
    for (const field of ENRICH_IDENTIFIERS) if (input[field] !== undefined) known[field] = input[field];
    const order = parseProviderOrder(input.providerOrder);
    const cleaned = cleanKnown(known);
    const goals: readonly Field[] = input.goalFields && input.goalFields.length > 0 ? input.goalFields : ENRICH_FIELDS;
    // What was sent is nobody's to find: the memory answers for the rest (all of it, with the default goals).
    const wanted = goals.filter((f) => !hasValue(cleaned[f]));
    const maxAge = input.forceRefresh ? 0 : (input.maxAge ?? DEFAULT_MAX_AGE_SECONDS);
    const key = memory.keyOf(ctx.workspaceId, cleaned) ?? { id: memory.idOf(ctx.workspaceId, ''), asked: '' };
    const answered = (recall: Recall) => maxAge > 0 && wanted.length > 0 && recall.covered.length === wanted.length;

    // Fresh data asked for (maxAge 0, forceRefresh): nothing to read, only the memory to refresh.
    const recalled: Recall = maxAge > 0 ? await memory.recall(key, ctx.workspaceId, wanted, maxAge) : NOTHING_RECALLED;
    if (answered(recalled)) return fromMemory(goals, cleaned, recalled, ctx);

    const run = async (): Promise<EnrichAnswer> => {
      const recall = maxAge > 0 ? await memory.recall(key, ctx.workspaceId, wanted, maxAge) : recalled;
      if (answered(recall)) return fromMemory(goals, cleaned, recall, ctx);
      const slots = await providers.forWorkspace(ctx.workspaceId);
      const budget = await ctx.budget(input.maxCredits);
      const stored = Object.fromEntries(Object.entries(recall.fields).map(([f, s]) => [f, s!.value])) as FieldValues;
      const result = await enrichRecord(
        {
          known: { ...stored, ...cleaned },
          goalFields: wanted.filter((f) => !recall.covered.includes(f)),
          providerOrder: order,
          onlyListed: input.onlyListed ?? false,
          budget: budget.credits,
        },
        slots,
        ctx,
      );
      // Nothing could be tried because the budget could not pay for the providers that could answer.
      if (result.cost === 0 && result.attempts.some((a) => a.error === 'over the credit budget')) {
        budget.requireBalanceFor(1, 'the providers that could answer');
      }
      const charged = result.attempts.filter((a) => a.cost > 0);
      const creditsCharged = await ctx.charge(result.cost, charged.map((a) => `${a.provider} ${a.cost}`).join(', ') || 'nothing found');

      if (allFailed(result.attempts)) {
        const why = result.attempts.map((a) => a.error).filter(Boolean).join('; ');
        throw new ServiceError('provider_unavailable', `Every provider failed: ${why}`);
      }
      const enrichedAt = new Date();
      await remember(memory, key, ctx.workspaceId, result, wanted, slots, enrichedAt);

      // What came from memory keeps its provenance: it was paid for earlier, not sent now.
      const sources = { ...result.sources };
      const confidence = { ...result.confidence };
      for (const [field, s] of Object.entries(recall.fields) as Array<[Field, StoredField]>) {
        if (cleaned[field] !== undefined || sources[field] !== 'input') continue;
        sources[field] = s.source;
        if (s.confidence !== undefined) confidence[field] = s.confidence;
      }
      const reached = result.attempts.some((a) => a.error !== 'not configured');
      const hint = reached ? null : noProviderHint(providers.all, slots, result.record, goals);
      const answer: EnrichAnswer = {
        // What was sent is the body's identifiers (strings, the CNPJ normalized) and what was found is
        // typed by the providers' ProviderFields, so every value is the contract's.
        record: result.record as FoundFields,
        sources,
        providers: result.attempts,
        confidence,
        creditsCharged,
        cached: false,
        enrichedAt: enrichedAt.toISOString(),
        missing: goals.filter((f) => result.record[f] === undefined),
        ...(hint ? { message: hint } : {}),
      };
      return answer;
    };
    // Identical requests at once call the providers once: the others wait, then read what it stored.
    // A request that asked for fresh data (maxAge 0, forceRefresh) waits for nobody.
    return maxAge > 0 ? memory.exclusive(key, ctx.workspaceId, run, ctx.signal) : run();
  };

  /** The stored answer: charged 0, nobody called; what it spared is counted for the credits page. */
  async function fromMemory(goals: readonly Field[], cleaned: FieldValues, recall: Recall, ctx: HandlerContext): Promise<EnrichAnswer> {
    const { record, sources, confidence } = recalledRecord(cleaned, recall);
    // What the workspace would have paid again: each provider behind a wanted field, once.
    const paid = new Map<string, number>();
    for (const field of recall.covered) {
      const s = recall.fields[field];
      if (s && sources[field] === s.source) paid.set(s.source, Math.max(paid.get(s.source) ?? 0, s.cost));
    }
    const spared = [...paid.values()].reduce((a, b) => a + b, 0);
    // A statistic, not the workspace's data: the answer does not wait for its write (as a key's last use).
    memory.saved(ctx.workspaceId, spared).catch((err) => ctx.log.warn({ err }, 'counting what the enrichment memory saved failed'));
    return {
      record: record as FoundFields,
      sources,
      providers: [],
      confidence,
      creditsCharged: 0,
      cached: true,
      enrichedAt: (recall.enrichedAt ?? new Date()).toISOString(),
      missing: goals.filter((f) => record[f] === undefined),
    };
  }

  return { enrich };
}
