/**
 * Idempotent retries (IETF draft-ietf-httpapi-idempotency-key-header): for an operation that
 * takes an `Idempotency-Key` (`takesIdempotencyKey`, from the registry), the first answer under a
 * key is stored for 24 h in the workspace and given again, not run again, to a request with the
 * same key and the same request; the same key with another request is 422
 * `idempotency_key_reused`, and while the first is still running 409 `idempotency_key_in_use`.
 *
 * The key is claimed by inserting a document whose `_id` is a hash of the workspace and the key:
 * the store's unique `_id` lets exactly one of any number of concurrent duplicates run, in one
 * process or across instances sharing MongoDB. A claim holds a lease, which its request renews
 * while it runs; a process that died leaves a claim that a retry may take over once the lease has
 * passed.
 *
 * What is stored: a success's body (or a stream's events), and a failure only when it came after
 * a charge; a failure that charged nothing releases the key, so a retry runs afresh.
 *
 * A claim counts what its request is about to charge (`charging`), before each debit, so a claim
 * whose process died says what it may have charged. The retry that takes it over runs the
 * operation again with that amount already paid (`prepaid`): its charges are taken from it first,
 * and what it leaves unused is refunded by a movement naming the key (pipeline.ts). So a key cut
 * by a crash still gets its answer, never a 5xx, and its total charge is what one run costs.
 * Counting before the debit errs the customer's way: a count whose debit never landed makes the
 * retry cheaper, never dearer. On the embedded store one process holds the store, so at start-up
 * every claim still running is known dead (`settleAbandoned`): its retry runs at once instead of
 * waiting out the lease.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { OperationId } from '../../shared/operations/index.ts';
import { ServiceError, type ErrorCode } from '../lib/errors.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';
import type { Receipt, StreamEvent } from '../invocation/outcome.ts';

/** How long an answer is kept and replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/**
 * How long a running claim keeps duplicates out before a retry may take it over (its process
 * died). The request renews it every third of it while it runs, so only a dead one's lapses.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** The draft leaves the length open; 255 visible ASCII characters hold any UUID, hash or composite key. */
export const IDEMPOTENCY_KEY_MAX = 255;

export type StoredAnswer =
  /** `credits`: what the first request charged (absent in answers stored before it was kept). */
  | { kind: 'value'; status: number; body: string; credits?: number }
  | {
      kind: 'stream';
      streamId: string;
      /** The events sent, as a JSON array. */
      events: string;
      /** How it ended when not with its last event: an error after it started, or its client leaving. */
      error?: { code: ErrorCode; message: string };
    }
  | { kind: 'error'; code: ErrorCode; message: string; credits?: number };

/**
 * What a key holds once its first request has answered, and what that request charged: a replay
 * charges nothing, but a job's item replayed after a crash reports its first run's charge.
 */
export interface Stored {
  answer: StoredAnswer;
  charged: number;
}

export interface IdempotencyDoc {
  /** SHA-256 of the workspace and the key: a key is the client's, a workspace's alone. */
  _id: string;
  workspaceId: string;
  operationId: string;
  /** SHA-256 of the canonical request: operation, params, query, body (and the answer form). */
  requestHash: string;
  state: 'running' | 'done';
  /** Names the one request that holds a running claim. */
  claimId: string;
  leaseUntil: Date;
  /** Credits the request was about to charge, or charged: counted before each debit. */
  charged?: number;
  createdAt: Date;
  expiresAt: Date;
  answer?: StoredAnswer;
}

const COLLECTION = 'idempotencyKeys';

export const idempotencyIndexes: IndexDeclaration[] = [{ collection: COLLECTION, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } }];

/** What a key is made of: visible ASCII (the draft's token or string), as OpenAPI's header schema says too. */
export const IDEMPOTENCY_KEY_CHARACTERS = '^[\\x21-\\x7e]+$';
const KEY_CHARACTERS = new RegExp(IDEMPOTENCY_KEY_CHARACTERS);

/**
 * The key as sent: a token, or a structured-field string (`"…"`, the draft's form); 1 to 255
 * visible ASCII characters. Anything else is 400.
 */
export function checkIdempotencyKey(raw: string): string {
  let key = raw.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1).replace(/\\(["\\])/g, '$1');
  if (key.length === 0) throw new ServiceError('invalid_request', 'Idempotency-Key is empty; send a unique value per request, e.g. a UUID.');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw new ServiceError('invalid_request', `Idempotency-Key must be at most ${IDEMPOTENCY_KEY_MAX} characters.`);
  if (!KEY_CHARACTERS.test(key)) throw new ServiceError('invalid_request', 'Idempotency-Key must be visible ASCII characters only (no spaces or control characters).');
  return key;
}

/** A hash of the request as validated: the same request hashes the same whatever its keys' order. */
export function requestHash(operationId: OperationId, parts: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson({ operationId, ...parts })).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A request's hold on its key, until it stores its answer or lets the key go. */
export interface Claim {
  complete(answer: StoredAnswer): Promise<void>;
  release(): Promise<void>;
  /**
   * Counts credits about to be charged (negative: a charge refused, or refunded). On the embedded
   * store it is not waited for: writes reach the journal in order, so the debit's own durable
   * write makes this one durable too, without a disk flush of its own. On MongoDB the debit is
   * another document's write, so the count is waited for before it.
   */
  charging(credits: number): Promise<void>;
}

/** A claim taken: fresh (`prepaid` 0), or taken over from a run that died after charging `prepaid`. */
export interface Claimed {
  claim: Claim;
  /** What the dead run counted: at most what it charged (counted before each debit). */
  prepaid: number;
  /** When the key was first claimed: no movement of its runs is older. */
  since: Date;
}

export class IdempotencyKeys {
  private readonly docs: Collection<IdempotencyDoc>;
  /** Whether a write is ordered before the next one without being waited for (see `charging`). */
  private readonly ordered: boolean;

  constructor(
    store: Store,
    private readonly now: () => number = Date.now,
    private readonly leaseMs = IDEMPOTENCY_LEASE_MS,
  ) {
    this.docs = store.collection<IdempotencyDoc>(COLLECTION);
    this.ordered = store.kind === 'embedded';
  }

  /**
   * Claims `key` for this request, or answers what is stored under it. 422 when the key was used
   * for another request, 409 while the first request under it still runs.
   */
  async claim(workspaceId: string, key: string, operationId: OperationId, hash: string): Promise<Claimed | { stored: Stored }> {
    const _id = createHash('sha256').update(`${workspaceId}\0${key}`).digest('hex');
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.now();
      const claimId = randomUUID();
      const lease = { claimId, leaseUntil: new Date(now + this.leaseMs) };
      try {
        await this.docs.insertOne({
          _id,
          workspaceId,
          operationId,
          requestHash: hash,
          state: 'running',
          ...lease,
          createdAt: new Date(now),
          expiresAt: new Date(now + IDEMPOTENCY_TTL_MS),
        });
        return { claim: this.claimOf(_id, claimId), prepaid: 0, since: new Date(now) };
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const existing = await this.docs.findOne({ _id });
      if (!existing) continue;
      if (existing.expiresAt.getTime() <= now) {
        // Past its 24 h, not yet removed by the TTL index: gone as far as clients are concerned.
        await this.docs.deleteOne({ _id, claimId: existing.claimId });
        continue;
      }
      if (existing.requestHash !== hash) {
        throw new ServiceError(
          'idempotency_key_reused',
          'This Idempotency-Key was used for another request (another operation or body) in the last 24 hours; use a new key for a new request.',
        );
      }
      if (existing.state === 'done' && existing.answer) {
        const answer = existing.answer;
        const charged = answer.kind === 'stream' ? undefined : answer.credits;
        return { stored: { answer, charged: charged ?? Math.max(0, existing.charged ?? 0) } };
      }
      if (existing.leaseUntil.getTime() > now) {
        throw new ServiceError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry once it has answered.', {
          retryAfterSeconds: 1,
        });
      }
      // The request that claimed it never finished (its process stopped): this one takes over,
      // with what that one charged already paid.
      const taken = await this.docs.updateOne({ _id, state: 'running', claimId: existing.claimId }, { $set: lease });
      if (taken.matchedCount === 1) return { claim: this.claimOf(_id, claimId), prepaid: Math.max(0, existing.charged ?? 0), since: existing.createdAt };
    }
    throw new ServiceError('idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry once it has answered.', {
      retryAfterSeconds: 1,
    });
  }

  private claimOf(_id: string, claimId: string): Claim {
    // The lease is renewed while the request runs (a stream may run for minutes), for at most the key's 24 h.
    const renewUntil = this.now() + IDEMPOTENCY_TTL_MS;
    const renewal = setInterval(() => {
      if (this.now() > renewUntil) return clearInterval(renewal);
      this.docs.updateOne({ _id, claimId, state: 'running' }, { $set: { leaseUntil: new Date(this.now() + this.leaseMs) } }).catch(() => {});
    }, this.leaseMs / 3);
    renewal.unref();
    return {
      complete: async (answer) => {
        clearInterval(renewal);
        const now = this.now();
        await this.docs.updateOne({ _id, claimId }, { $set: { state: 'done', answer, expiresAt: new Date(now + IDEMPOTENCY_TTL_MS) } });
      },
      release: async () => {
        clearInterval(renewal);
        await this.docs.deleteOne({ _id, claimId, state: 'running' });
      },
      charging: (credits) => {
        const counted = this.docs.updateOne({ _id, claimId }, { $inc: { charged: credits } }).then(() => {});
        if (!this.ordered) return counted;
        counted.catch(() => {});
        return Promise.resolve();
      },
    };
  }

  /**
   * Settles every claim still running, for a store only this process uses (the embedded store, at
   * start-up): their requests died with their process. One that charged nothing lets its key go,
   * so its retry runs afresh; one that charged has its lease ended, so its retry takes it over at
   * once and runs with that charge already paid.
   */
  async settleAbandoned(): Promise<number> {
    const abandoned = await this.docs.find({ state: 'running' }, { projection: { _id: 1, claimId: 1, charged: 1 } }).toArray();
    for (const { _id, claimId, charged = 0 } of abandoned) {
      if (charged <= 0) await this.docs.deleteOne({ _id, claimId, state: 'running' });
      else await this.docs.updateOne({ _id, claimId, state: 'running' }, { $set: { leaseUntil: new Date(0) } });
    }
    return abandoned.length;
  }
}

/** What a failure under a claim leaves: stored when it came after a charge, else the key is let go. */
export async function settleFailure(claim: Claim, err: unknown, receipt: Receipt): Promise<void> {
  if (receipt.credits > 0) await claim.complete({ kind: 'error', ...errorOf(err), credits: receipt.credits });
  else await claim.release();
}

function errorOf(err: unknown): { code: ErrorCode; message: string } {
  return err instanceof ServiceError ? { code: err.code, message: err.message } : { code: 'internal_error', message: 'The stream failed.' };
}

/**
 * A stream's events as they pass, stored under the claim once it ends: all of them; up to a
 * failure (stored when something was charged); or, when its client stopped reading before the end,
 * what was sent if anything was charged, else nothing, and the key is let go.
 */
export async function* recordEvents(
  events: AsyncIterable<StreamEvent>,
  claim: Claim,
  receipt: Receipt,
  streamId: string,
  /** Run once the stream has ended, before it is stored: gives back what a cut run's retry left unused. */
  ended: () => Promise<void> = async () => {},
): AsyncGenerator<StreamEvent> {
  const log: StreamEvent[] = [];
  let settled = false;
  try {
    for await (const event of events) {
      log.push(event);
      yield event;
    }
    settled = true;
    await ended();
    await claim.complete({ kind: 'stream', streamId, events: JSON.stringify(log) });
  } catch (err) {
    settled = true;
    await ended();
    if (receipt.credits > 0) await claim.complete({ kind: 'stream', streamId, events: JSON.stringify(log), error: errorOf(err) });
    else await claim.release();
    throw err;
  } finally {
    if (!settled) {
      await ended();
      if (receipt.credits > 0) {
        const error = { code: 'internal_error' as const, message: 'The first request under this Idempotency-Key stopped before its end (its client left); this is what it sent.' };
        await claim.complete({ kind: 'stream', streamId, events: JSON.stringify(log), error });
      } else await claim.release();
    }
  }
}

/** A stored stream sent again: its events, then its failure if it ended in one. */
export async function* replayEvents(answer: Extract<StoredAnswer, { kind: 'stream' }>): AsyncGenerator<StreamEvent> {
  for (const event of JSON.parse(answer.events) as StreamEvent[]) yield event;
  if (answer.error) throw new ServiceError(answer.error.code, answer.error.message);
}
