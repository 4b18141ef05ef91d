/**
 * The error statuses OpenAPI lists for an operation, derived from what answers it: the HTTP layer
 * and the pipeline (every operation), the kinds of operation the registry declares (a credential,
 * a plan, a price, a body, an `Idempotency-Key`), then the statuses its entry names for its
 * handler (`errors`). Each status says which error codes it carries, so a client generated from
 * /openapi.json meets no status it was not told of.
 */
import { isPaid, mayCharge, mayNeedPlan, takesIdempotencyKey, type Operation } from '../../shared/operations/types.ts';
import type { ErrorCode } from '../lib/errors.ts';
import { STATUS_OF } from './error-status.ts';

/** What every operation can answer, whatever it is: the version header, the rate limit, the store. */
const EVERY_OPERATION: ErrorCode[] = ['unsupported_version', 'rate_limited', 'internal_error', 'store_unavailable'];

/** The error codes the layers in front of the handler can answer for `op`. */
function pipelineCodes(op: Operation): ErrorCode[] {
  const hasInput = Boolean(op.request.params || op.request.query || op.request.body);
  return [
    ...EVERY_OPERATION,
    ...(hasInput ? (['invalid_request'] as const) : []),
    ...(op.scope || op.actsFor ? (['unauthorized', 'insufficient_scope'] as const) : []),
    ...(op.access === 'dashboard' ? (['unauthorized', 'dashboard_only', 'cross_origin'] as const) : []),
    ...(mayNeedPlan(op) ? (['plan_required'] as const) : []),
    ...(mayCharge(op) ? (['insufficient_credits'] as const) : []),
    ...(op.request.body ? (['payload_too_large', 'unsupported_media_type'] as const) : []),
    ...(takesIdempotencyKey(op) ? (['idempotency_key_in_use', 'idempotency_key_reused'] as const) : []),
    // A write on a full disk (the embedded store) is refused before anything changes.
    ...(op.method !== 'GET' || isPaid(op) ? (['insufficient_storage'] as const) : []),
  ];
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request; `message` names the field.',
  401: 'API key or access token missing, invalid or revoked.',
  402: 'Insufficient credits, or no active plan.',
  403: 'The credential lacks the scope of this operation.',
  404: 'Resource not found.',
  409: 'Conflict with the current state.',
  413: 'The body is larger than this operation takes.',
  415: 'The body is not application/json.',
  422: 'The `Idempotency-Key` was used for another request.',
  429: 'Rate limit exceeded; see `Retry-After`.',
  500: 'Internal error.',
  501: 'Not implemented yet.',
  502: 'The AI model answered something unusable.',
  503: 'A dependency (the store, the AI model, a data provider) is unavailable; retry later.',
  507: 'The server is out of storage; retry later (`Retry-After`).',
};

/** Error status → its description, for every error `op` can answer, in order. */
export function errorResponses(op: Operation): Array<{ status: number; description: string }> {
  const codes = new Map<number, Set<ErrorCode>>();
  for (const code of pipelineCodes(op)) {
    const status = STATUS_OF[code];
    (codes.get(status) ?? codes.set(status, new Set()).get(status)!).add(code);
  }
  for (const status of op.errors) if (!codes.has(status)) codes.set(status, new Set());
  return [...codes.keys()]
    .sort((a, b) => a - b)
    .map((status) => {
      const named = [...codes.get(status)!];
      const listed = named.length ? ` Codes include ${named.map((code) => `\`${code}\``).join(', ')}.` : '';
      return { status, description: `${DESCRIPTIONS[status] ?? 'Error.'}${listed}` };
    });
}
