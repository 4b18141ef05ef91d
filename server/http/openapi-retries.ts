/**
 * What OpenAPI says of retries, kept apart from openapi.ts: the `Idempotency-Key` header of the
 * operations that take one (`takesIdempotencyKey`, the registry's rule) with their 409 and 422,
 * and a stream's `Last-Event-ID` with its 204.
 */
import { takesIdempotencyKey, type Operation } from '../../shared/operations/types.ts';
import { IDEMPOTENCY_KEY_CHARACTERS, IDEMPOTENCY_KEY_MAX } from '../pipeline/idempotency.ts';

export function retryParameters(op: Operation): unknown[] {
  const out: unknown[] = [];
  if (takesIdempotencyKey(op)) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'draft-ietf-httpapi-idempotency-key-header: a unique value per request (a UUID), 1 to 255 visible ASCII characters. ' +
        'The first answer is stored for 24 hours in the workspace and replayed (with `Idempotent-Replayed: true`) for the ' +
        'same key and request, never run or charged again; the same key with another request is 422, one still running 409.',
      schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX, pattern: IDEMPOTENCY_KEY_CHARACTERS },
    });
  }
  if (op.stream) {
    out.push({
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description:
        'A reconnection: the id of the last event received (`<streamId>:<seq>`). Nothing is run or charged: the stream ' +
        'continues after that event, or 204 says there is nothing more.',
      schema: { type: 'string' },
    });
  }
  return out;
}

/** Statuses the retry headers add to an operation's responses, with their descriptions. */
export function retryStatuses(op: Operation): Array<{ status: number; description: string; empty?: true }> {
  const out: Array<{ status: number; description: string; empty?: true }> = [];
  if (op.stream) {
    out.push({
      status: 204,
      description: 'A reconnection (`Last-Event-ID`) to a stream with nothing more to send; `Stream-Status` says why (`finished`, `stopped`, `unknown`).',
      empty: true,
    });
  }
  if (takesIdempotencyKey(op)) {
    out.push({ status: 409, description: 'Conflict with the current state, or a request with this `Idempotency-Key` still running (`idempotency_key_in_use`).' });
    out.push({ status: 422, description: 'This `Idempotency-Key` was used for another request (`idempotency_key_reused`).' });
  }
  return out;
}
