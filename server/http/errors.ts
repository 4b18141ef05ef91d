/**
 * The one error type handlers and middleware throw. The error middleware turns it, and every
 * unexpected error, into the interface's `{error, message}` body; nothing else writes errors.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_cnpj'
  | 'unsupported_version'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'plan_required'
  | 'insufficient_scope'
  | 'not_found'
  | 'method_not_allowed'
  | 'name_taken'
  | 'cadence_not_generated'
  | 'campaign_full'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'ai_unavailable'
  | 'ai_failed'
  | 'provider_unavailable';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const invalidRequest = (message: string) => new ApiError(400, 'invalid_request', message);
