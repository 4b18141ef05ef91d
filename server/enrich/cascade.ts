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
import { answerParts, canRun } from '../providers/data-provider.ts';
import { cleanFound } from '../providers/clean-found.ts';
import type { TraceContext } from '../lib/trace-context.ts';

/** One provider reached (or passed over) by the cascade, as enrich and hydrate report it. */
export type Attempt = ProviderAttempt;
export type Outcome = Attempt['outcome'];

export interface CascadeInput {
  known: FieldValues;
  goals: readonly Field[];
  /** The providers to walk, in order. */
  order: readonly ProviderSlot[];
  /** A field's own order, when `providerOrder` gave it one (decisions.md); else `order`. */
  orderFor?: (field: Field) => readonly ProviderSlot[];
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
  /** Field → the confidence (0 to 1) the provider that gave it stated, where it states one. */
  confidence: Partial<Record<Field, number>>;
  attempts: Attempt[];
  cost: number;
}

export async function runCascade(input: CascadeInput): Promise<CascadeResult> {
  const record = present(input.known);
  const sources: Partial<Record<Field, string>> = {};
  const confidence: Partial<Record<Field, number>> = {};
  for (const field of Object.keys(record) as Field[]) sources[field] = 'input';
  const attempts: Attempt[] = [];
  const done = new Set<string>();
  let spent = 0;
  const orderFor = input.orderFor ?? (() => input.order);

  const missing = () => input.goals.filter((f) => !hasValue(record[f]));

  while (!input.signal.aborted) {
    const wanted = missing();
    if (wanted.length === 0) break;
    const known = new Set(Object.keys(record) as Field[]);

    // This round: for each wanted field, the first provider of that field's order that can run
    // and give it. A provider chosen for several fields is called once; together they cost at
    // most the budget left. (With one order for all fields, this is each runnable provider, in
    // order, that can add a field no earlier one of the round could.)
    const round: ProviderSlot[] = [];
    let reserved = spent;
    for (const field of wanted) {
      for (const slot of orderFor(field)) {
        const { provider } = slot;
        if (done.has(provider.id) || !provider.outputs.includes(field) || !canRun(provider, known)) continue;
        if (round.includes(slot)) break;
        if (reserved + slot.cost > input.budget) {
          done.add(provider.id);
          attempts.push({ provider: provider.id, outcome: 'skipped', fields: [], cost: 0, ms: 0, error: 'over the credit budget' });
          continue;
        }
        reserved += slot.cost;
        round.push(slot);
        break;
      }
    }
    if (round.length === 0) break;

    const answers = await Promise.all(round.map((slot) => call(slot, record, input)));
    // A field found by several providers of the round takes the value of the one its order ranks first.
    const rank = (field: Field, slot: ProviderSlot) => {
      const at = orderFor(field).indexOf(slot);
      return at === -1 ? Infinity : at;
    };
    const winner = new Map<Field, number>();
    answers.forEach(({ found }, i) => {
      if (!found) return;
      const slot = round[i]!;
      for (const field of Object.keys(found) as Field[]) {
        if (hasValue(record[field]) || !slot.provider.outputs.includes(field)) continue;
        const best = winner.get(field);
        if (best === undefined || rank(field, slot) < rank(field, round[best]!)) winner.set(field, i);
      }
    });
    round.forEach((slot, i) => {
      done.add(slot.provider.id);
      const { found, attempt, confidence: stated } = answers[i]!;
      if (found) {
        for (const [field, at] of winner) {
          if (at !== i) continue;
          record[field] = found[field];
          sources[field] = slot.provider.id;
          const c = stated?.[field];
          if (c !== undefined) confidence[field] = c;
          attempt.fields.push(field);
        }
        attempt.cost = slot.cost;
        spent += slot.cost;
      }
      attempts.push(attempt);
    });
  }
  return { record, sources, confidence, attempts, cost: spent };
}

/** One provider call as an outcome: never throws for the provider's faults. */
async function call(
  slot: ProviderSlot,
  record: FieldValues,
  input: CascadeInput,
): Promise<{ found: FieldValues | null; attempt: Attempt; confidence?: Partial<Record<Field, number>> }> {
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
    const answer = await slot.provider.enrich({ ...record }, { signal: input.signal, http: slot.http, trace: input.trace });
    const { fields, confidence } = answerParts(answer);
    // What fails the contract (NUL, a lone surrogate, past its length, 1e309) is left out, and
    // an answer left with nothing is no data: not paid for.
    const data = fields ? present(cleanFound(fields)) : null;
    // Data that adds nothing still counts as data returned: the provider charged for it.
    return data && Object.keys(data).length > 0
      ? { found: data, attempt: attempt('found'), confidence }
      : { found: null, attempt: attempt('not_found') };
  } catch (err) {
    if (err instanceof ProviderFailure) return { found: null, attempt: attempt(err.skipped ? 'skipped' : 'failed', err.message) };
    if (input.signal.aborted) return { found: null, attempt: attempt('skipped', 'the client went away') };
    input.log.error({ err, provider: slot.provider.id }, 'provider adapter failed');
    return { found: null, attempt: attempt('failed', `${slot.provider.name} failed unexpectedly`) };
  }
}
