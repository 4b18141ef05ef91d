/**
 * The cascade: walks the providers in order and calls one only when what is known lets it run
 * and it can add a field still wanted. Providers that would add different fields run together;
 * a provider that could give the same field as an earlier one waits to see whether it must.
 * The first value found for a field wins (by provider order, not by arrival) and records its
 * source; the walk ends when every wanted field is filled or nobody can add more.
 */
import type { Logger } from 'pino';
import type { ProviderAttempt } from '../../shared/types.ts';
import { hasValue, present, type Field, type FieldValues } from '../providers/fields.ts';
import type { ProviderSlot } from '../providers/providers.ts';
import { ProviderFailure } from '../providers/provider-failure.ts';
import { canRun } from '../providers/provider.ts';
import type { TraceContext } from '../trace-context.ts';

/** One provider reached (or passed over) by the cascade, as enrich and hydrate report it. */
export type Attempt = ProviderAttempt;
export type Outcome = Attempt['outcome'];

export interface CascadeInput {
  known: FieldValues;
  goals: readonly Field[];
  /** The providers to walk, in order. */
  order: readonly ProviderSlot[];
  /** Credits the walk may spend; a provider whose price would pass it is skipped. */
  budget: number;
  signal: AbortSignal;
  /** The request's trace, which each provider call carries on. */
  trace?: TraceContext;
  /** Where an adapter's unexpected failure is told (the cascade goes on without it). */
  log: Logger;
}

export interface CascadeResult {
  record: FieldValues;
  /** Field → the provider that gave it (`input` for what was sent). */
  sources: Partial<Record<Field, string>>;
  attempts: Attempt[];
  cost: number;
}

export async function runCascade(input: CascadeInput): Promise<CascadeResult> {
  const record = present(input.known);
  const sources: Partial<Record<Field, string>> = {};
  for (const field of Object.keys(record) as Field[]) sources[field] = 'input';
  const attempts: Attempt[] = [];
  const done = new Set<string>();
  let spent = 0;

  const missing = () => input.goals.filter((f) => !hasValue(record[f]));

  while (!input.signal.aborted) {
    const wanted = new Set(missing());
    if (wanted.size === 0) break;
    const known = new Set(Object.keys(record) as Field[]);

    // This round: in order, each runnable provider that can add a wanted field no earlier
    // provider of the round could add. Together they cost at most the budget left.
    const round: ProviderSlot[] = [];
    const claimed = new Set<Field>();
    let reserved = spent;
    for (const slot of input.order) {
      const { provider } = slot;
      if (done.has(provider.id) || !canRun(provider, known)) continue;
      const adds = provider.outputs.filter((f) => wanted.has(f) && !claimed.has(f));
      if (adds.length === 0) continue;
      if (reserved + slot.cost > input.budget) {
        done.add(provider.id);
        attempts.push({ provider: provider.id, outcome: 'skipped', fields: [], cost: 0, ms: 0, error: 'over the credit budget' });
        continue;
      }
      reserved += slot.cost;
      adds.forEach((f) => claimed.add(f));
      round.push(slot);
    }
    if (round.length === 0) break;

    const answers = await Promise.all(round.map((slot) => call(slot, record, input)));
    round.forEach((slot, i) => {
      done.add(slot.provider.id);
      const { found, attempt } = answers[i]!;
      if (found) {
        for (const [field, value] of Object.entries(present(found)) as [Field, unknown][]) {
          if (hasValue(record[field]) || !slot.provider.outputs.includes(field)) continue;
          record[field] = value;
          sources[field] = slot.provider.id;
          attempt.fields.push(field);
        }
        attempt.cost = slot.cost;
        spent += slot.cost;
      }
      attempts.push(attempt);
    });
  }
  return { record, sources, attempts, cost: spent };
}

/** One provider call as an outcome: never throws for the provider's faults. */
async function call(
  slot: ProviderSlot,
  record: FieldValues,
  input: CascadeInput,
): Promise<{ found: FieldValues | null; attempt: Attempt }> {
  const started = performance.now();
  const attempt = (outcome: Outcome, error?: string): Attempt => ({
    provider: slot.provider.id,
    outcome,
    fields: [],
    cost: 0,
    ms: Math.round(performance.now() - started),
    ...(error ? { error } : {}),
  });
  try {
    const found = await slot.provider.enrich({ ...record }, { signal: input.signal, http: slot.http, trace: input.trace });
    const data = found ? present(found) : null;
    // Data that adds nothing still counts as data returned: the provider charged for it.
    return data && Object.keys(data).length > 0
      ? { found: data, attempt: attempt('found') }
      : { found: null, attempt: attempt('not_found') };
  } catch (err) {
    if (err instanceof ProviderFailure) return { found: null, attempt: attempt(err.skipped ? 'skipped' : 'failed', err.message) };
    if (input.signal.aborted) return { found: null, attempt: attempt('skipped', 'the client went away') };
    input.log.error({ err, provider: slot.provider.id }, 'provider adapter failed');
    return { found: null, attempt: attempt('failed', `${slot.provider.name} failed unexpectedly`) };
  }
}
