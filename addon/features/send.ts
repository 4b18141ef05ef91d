/**
 * Requests of one chunk in one `UrlFetchApp.fetchAll`. A 429 waits as its `Retry-After` says and
 * sends those requests again (a few times, each with its first `Idempotency-Key`); a bad key or an empty balance stops the job; any other
 * failure stays with its rows, so the run goes on with the next ones.
 */
import { ApiCallError, type ProspectaClient } from '../api/client.ts';
import { sending, type HttpPort, type HttpRequest } from '../api/http.ts';
import type { InputOf, OutputOf } from '../../shared/operations/index.ts';
import type { AddonOperationId } from '../api/registry.ts';
import { plainError, StopJob } from './errors.ts';
import type { Clock } from './ports.ts';

const MAX_429_RETRIES = 3;
const MAX_WAIT_S = 60;

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export function sendAll<Id extends AddonOperationId>(
  client: ProspectaClient,
  http: HttpPort,
  clock: Clock,
  id: Id,
  inputs: Array<InputOf<Id>>,
): Array<Outcome<OutputOf<Id>>> {
  const outcomes: Array<Outcome<OutputOf<Id>> | undefined> = inputs.map(() => undefined);
  let pending = inputs.map((_, i) => i);
  // One key per call, sent again with each of its retries: a retry is answered, never charged twice.
  const keys = inputs.map(() => client.idempotencyKey());
  for (let attempt = 0; pending.length > 0; attempt++) {
    const requests: HttpRequest[] = pending.map((i) => client.request(id, inputs[i]!, keys[i]!));
    let responses;
    try {
      responses = sending(() => http.fetchAll(requests));
    } catch (err) {
      for (const i of pending) outcomes[i] = { ok: false, error: plainError(err) };
      break;
    }
    let wait = 0;
    const again: number[] = [];
    responses.forEach((response, k) => {
      const i = pending[k]!;
      try {
        outcomes[i] = { ok: true, value: client.parse(id, response) };
      } catch (err) {
        if (!(err instanceof ApiCallError)) throw err;
        if (err.status === 401 || err.status === 403) throw new StopJob(plainError(err));
        if (err.status === 402) throw new StopJob(plainError(err));
        if (err.status === 429 && attempt < MAX_429_RETRIES) {
          again.push(i);
          wait = Math.max(wait, Math.min(err.retryAfter ?? 5, MAX_WAIT_S));
          return;
        }
        outcomes[i] = { ok: false, error: plainError(err) };
      }
    });
    if (again.length > 0) clock.sleep(wait * 1000);
    pending = again;
  }
  return outcomes.map((o) => o ?? { ok: false, error: 'not sent' });
}
