/**
 * The one error type the service throws on purpose: a code of the interface's error table and a
 * message for people. It knows nothing of HTTP: each binding maps it (HTTP to a status and
 * headers in `http/error-status.ts`, MCP to an `isError` result, the agent to a tool message),
 * so domain code and infrastructure never pick a status.
 */
import type { Scope } from '../shared/operations/types.ts';

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
