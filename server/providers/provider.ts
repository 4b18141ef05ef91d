/**
 * What a data provider is: a declaration (what it takes and gives, what it costs, its documented
 * limits, where its key lives) plus `enrich()`. The catalog, the throttles and the cascade are
 * all generated from declarations, so adding a provider is one file in this folder.
 */
import type { Services } from '../services.ts';
import type { ProviderId } from '../../shared/schemas/enrichment.ts';
import type { Field, FieldValues, ProviderFields } from './fields.ts';
import type { ProviderHttp } from './http.ts';

/** A field a third party's answer may leave out or send as null. */
export type Maybe<T> = T | null | undefined;

export interface DeclaredLimits {
  /** Calls per second the provider allows. */
  perSecond?: number;
  /** Calls per minute (a quota refilled every minute). */
  perMinute?: number;
  /** Calls in flight at once. */
  maxConcurrent: number;
  /** Calls allowed to wait in one process before new ones are refused at once. */
  maxQueued?: number;
}

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
  /** Local sources read the imported registry; the BrasilAPI source keeps its own client. */
  services: Pick<Services, 'companies' | 'remoteCompanies'>;
}

export interface Provider extends ProviderDeclaration {
  /**
   * The fields it found for this record, or null when it has no match (a miss, free everywhere).
   * A failure (rate limit, timeout, garbage) throws a {@link ProviderFailure}.
   */
  enrich(known: FieldValues, call: CallContext): Promise<ProviderFields | null>;
}

/** A call that did not produce an answer; the cascade records it and moves on. */
export class ProviderFailure extends Error {
  constructor(
    message: string,
    /** Whether the provider was not called at all (circuit open, no turn in time). */
    readonly skipped = false,
  ) {
    super(message);
    this.name = 'ProviderFailure';
  }
}

/** Environment-variable prefix of a provider: `hunter_verifier` → `HUNTER_VERIFIER`. */
export const envPrefix = (id: string) => id.toUpperCase().replace(/[^A-Z0-9]+/g, '_');

/** Whether the provider's every set of inputs misses at least one known field. */
export function canRun(provider: ProviderDeclaration, known: ReadonlySet<Field>): boolean {
  return provider.inputs.some((set) => set.every((field) => known.has(field)));
}
