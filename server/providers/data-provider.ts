/**
 * What a data provider is: a declaration (what it takes and gives, what it costs, its documented
 * limits, where its key lives) plus `enrich()`. The catalog, the throttles and the cascade are
 * all generated from declarations, so adding a provider is one file in this folder.
 */
import type { ProviderId } from '../../shared/schemas/enrichment.ts';
import type { DeclaredLimits } from '../outbound/limiter.ts';
import type { Field, FieldValues, ProviderFields } from './fields.ts';
import type { ProviderHttp } from './http.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export interface ProviderDeclaration {
  id: ProviderId;
  name: string;
  kind: 'person' | 'company' | 'email';
  /** Sets of fields it can work from: it can run once every field of one set is known. */
  inputs: Field[][];
  /** Fields it can return. */
  outputs: Field[];
  /** Credits charged per call that returned data (overridable with `<ID>_COST`). */
  cost: number;
  /** Breaks ties in the default order, which is by cost and then by this (higher first). */
  quality: number;
  /** Its documented limits (each overridable: `<ID>_RATE_PER_SECOND`, `_RATE_PER_MINUTE`, `_MAX_CONCURRENT`). */
  limits: DeclaredLimits;
  /** Environment variable holding the service's key; null for keyless providers. */
  keyVariable: string | null;
  /** What its keys look like and where they are found, for people pasting one (`provider-key set`). */
  keyLooksLike?: string;
  /** For an opt-in keyless provider: the variable that must be `true` before it is called. */
  switchVariable?: string;
  /** Its API root; `<ID>_URL` points it elsewhere (a proxy, a test double). Null for local sources. */
  baseUrl: string | null;
  /** Per attempt, body included. @default 10_000 */
  timeoutMs?: number;
}

/** What one call may use. */
export interface CallContext {
  signal: AbortSignal;
  /** This provider's throttled client, carrying the key the call is made with. */
  http: ProviderHttp;
  /** The request's trace, to pass to `http.send` (a child `traceparent` goes with each request). */
  trace?: TraceContext;
}

/**
 * Fields found with the confidence (0 to 1) the provider states for some of them, on its own
 * scale brought to 0..1 (Hunter's score / 100, People Data Labs' likelihood / 10).
 */
export interface ScoredFields {
  scored: ProviderFields;
  confidence: Partial<Record<Field, number>>;
}

export interface Provider extends ProviderDeclaration {
  /**
   * The fields it found for this record (with their confidence when the provider states one),
   * or null when it has no match (a miss, free everywhere). A failure (rate limit, timeout,
   * garbage) throws a {@link ProviderFailure}.
   */
  enrich(known: FieldValues, call: CallContext): Promise<ProviderFields | ScoredFields | null>;
}

/** `value` on the provider's scale `max` as a confidence between 0 and 1; null when it is no number. */
export function confidenceOf(value: unknown, max: number): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  return Math.min(1, Math.max(0, value / max));
}

/** The same confidence for each of `fields` that holds a value; none when the provider stated none. */
export function scored(fields: ProviderFields, confidence: number | null, only?: readonly Field[]): ProviderFields | ScoredFields {
  if (confidence === null) return fields;
  const each: Partial<Record<Field, number>> = {};
  for (const [field, value] of Object.entries(fields) as Array<[Field, unknown]>) {
    if (value !== null && value !== undefined && (!only || only.includes(field))) each[field] = confidence;
  }
  return { scored: fields, confidence: each };
}

/** An answer's fields and the confidence stated for them. */
export function answerParts(answer: ProviderFields | ScoredFields | null): { fields: ProviderFields | null; confidence?: Partial<Record<Field, number>> } {
  if (answer && 'scored' in answer && typeof answer.scored === 'object') return { fields: (answer as ScoredFields).scored, confidence: (answer as ScoredFields).confidence };
  return { fields: answer as ProviderFields | null };
}


/** Environment-variable prefix of a provider: `hunter_verifier` → `HUNTER_VERIFIER`. */
export const envPrefix = (id: string) => id.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/** Whether the provider's every set of inputs misses at least one known field. */
export function canRun(provider: ProviderDeclaration, known: ReadonlySet<Field>): boolean {
  return provider.inputs.some((set) => set.every((field) => known.has(field)));
}

/**
 * A provider whose adapter reads prospecta's own company lookups (the imported registry, the
 * BrasilAPI client) rather than an HTTP API: its declaration is known at start-up, for the
 * configuration, and its adapter is built once the lookups exist.
 */
export interface LocalProvider<Lookups> {
  declaration: ProviderDeclaration;
  build(lookups: Lookups): Provider;
}
