/**
 * The one error type the service throws on purpose: a code of the interface's error table and a
 * message for people. It knows nothing of HTTP: each binding maps it (HTTP to a status and
 * headers in `http/error-status.ts`, MCP to an `isError` result, the agent to a tool message),
 * so domain code and infrastructure never pick a status.
 */
import type { Scope } from '../../shared/operations/types.ts';

export type ErrorCode =
  | 'invalid_request'
  | 'invalid_cnpj'
  | 'invalid_cursor'
  | 'unsupported_version'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'plan_required'
  | 'insufficient_scope'
  | 'no_workspace'
  | 'dashboard_only'
  | 'cross_origin'
  | 'forbidden_origin'
  | 'not_found'
  | 'method_not_allowed'
  | 'name_taken'
  | 'cadence_not_generated'
  | 'campaign_full'
  | 'already_revoked'
  | 'job_finished'
  | 'idempotency_key_in_use'
  | 'idempotency_key_reused'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'ai_unavailable'
  | 'ai_failed'
  | 'provider_unavailable'
  | 'insufficient_storage'
  | 'store_unavailable';

/** What a binding may need beyond the message: when to retry, which scope was missing. */
export interface ErrorDetails {
  /** Seconds after which a retry may succeed (a rate limit, a provider's `Retry-After`). */
  retryAfterSeconds?: number;
  /** The scope an `insufficient_scope` error lacked. */
  scope?: Scope;
  /** For `unauthorized`: a credential was presented and refused (rather than none sent). */
  credentialRefused?: boolean;
  /** A failure replayed under an Idempotency-Key: what its first request had charged before failing. */
  charged?: number;
}

export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const notFound = (what: string) => new ServiceError('not_found', `${what} not found`);
export const invalidRequest = (message: string) => new ServiceError('invalid_request', message);
/** The database server could not be reached (it is restarting, or the network is down): retry soon. */
export const storeUnavailable = () =>
  new ServiceError('store_unavailable', 'The database is unreachable for the moment; retry shortly.', { retryAfterSeconds: 5 });

/** At most this many violations are named in one 400; the rest are counted. */
export const MAX_PROBLEMS = 10;

/** One `message` for a 400 naming every violation: "a; b; c; and 2 more problems". */
export function invalidRequestMessage(problems: string[]): string {
  const unique = [...new Set(problems)];
  const named = unique.slice(0, MAX_PROBLEMS).join('; ');
  const more = unique.length - MAX_PROBLEMS;
  return more > 0 ? `${named}; and ${more} more problem${more === 1 ? '' : 's'}` : named;
}

const isProblem = (err: unknown): err is ServiceError => err instanceof ServiceError && (err.code === 'invalid_request' || err.code === 'invalid_cnpj');

/**
 * Runs all of a request's checks that no schema can make (a CNPJ's check digits, a CNAE code, a
 * release, a webhook's address), so that one 400 names every problem, as the schema's 400 does;
 * resolves with their results. Refused for CNPJs alone, it is their `invalid_cnpj`; with other
 * problems, one `invalid_request` naming all. Any other failure (the store unreachable) is thrown as is.
 */
export async function checkAll<T extends unknown[]>(...checks: { [K in keyof T]: () => T[K] | Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled((checks as Array<() => unknown>).map(async (check) => check()));
  const refused = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
  if (refused.length === 0) return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as T;
  const other = refused.find((err) => !isProblem(err));
  if (other !== undefined || refused.length === 1) throw other ?? refused[0];
  const problems = refused as ServiceError[];
  const code = problems.every((p) => p.code === 'invalid_cnpj') ? 'invalid_cnpj' : 'invalid_request';
  throw new ServiceError(code, invalidRequestMessage(problems.map((p) => p.message)));
}
