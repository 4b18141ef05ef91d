/**
 * How a ServiceError reads over HTTP: the status of decisions.md's error table, and the headers
 * RFC 6750 (`WWW-Authenticate`) and RFC 9110 (`Retry-After`) ask for. The one place a code
 * becomes a status.
 */
import type { ErrorCode, ServiceError } from '../errors.ts';

export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_cnpj: 400,
  invalid_cursor: 400,
  unsupported_version: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  plan_required: 402,
  insufficient_scope: 403,
  no_workspace: 403,
  dashboard_only: 403,
  cross_origin: 403,
  forbidden_origin: 403,
  not_found: 404,
  method_not_allowed: 405,
  name_taken: 409,
  cadence_not_generated: 409,
  campaign_full: 409,
  request_timeout: 408,
  already_revoked: 409,
  job_finished: 409,
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  internal_error: 500,
  ai_failed: 502,
  ai_unavailable: 503,
  provider_unavailable: 503,
  insufficient_storage: 507,
  store_unavailable: 503,
};

/**
 * `resourceMetadata`: where the protected-resource metadata (RFC 9728) is, so an OAuth client
 * that was refused learns where to get a token.
 */
export function errorHeaders({ code, details }: ServiceError, resourceMetadata?: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const challenge = (...params: string[]) =>
    ['Bearer realm="prospecta"', ...params, ...(resourceMetadata ? [`resource_metadata="${resourceMetadata}"`] : [])].join(', ');
  if (code === 'unauthorized') headers['WWW-Authenticate'] = details.credentialRefused ? challenge('error="invalid_token"') : challenge();
  if (code === 'insufficient_scope') headers['WWW-Authenticate'] = challenge('error="insufficient_scope"', `scope="${details.scope}"`);
  if (details.retryAfterSeconds !== undefined) headers['Retry-After'] = String(details.retryAfterSeconds);
  return headers;
}
