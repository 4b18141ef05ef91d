/**
 * Webhook deliveries: each event is a stored document first, then POSTed, so a delivery survives
 * a restart; a delivery not answered 2xx within the timeout is tried again on a schedule (the
 * first retry within 5 s, then backing off; 8 attempts in all), each attempt with the same
 * `Prospecta-Delivery` id and a fresh signature:
 * `Prospecta-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 *
 * A runner takes a due delivery by moving its `nextAttemptAt` past the attempt's timeout with a
 * conditional update, so one instance sends it; one that dies mid-attempt leaves it due again
 * then. Redirects are not followed (a 3xx counts as a failure), and connections go through the
 * SSRF guard's lookup unless WEBHOOK_ALLOW_PRIVATE.
 *
 * Deliveries are shared fairly: a process sends at most `MAX_IN_FLIGHT` at once, a workspace
 * holds at most half of them, and free places go round the workspaces with due deliveries, then
 * round their jobs, each job's oldest first. So one job's backlog to a slow receiver (10,000
 * events answered after seconds each) never holds up another workspace's, or another job's,
 * first delivery: it goes out as soon as a place frees, within the receiver's timeout at worst.
 * Attempts are not waited for by the runner's pass, and each one ended looks for the next.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Logger } from 'pino';
import { BlockedAddressError, guardedLookup } from '../outbound/ssrf-guard.ts';
import { OutboundClient } from '../outbound/client.ts';
import { closeLimiter, createLimiter } from '../outbound/limiter.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';
import { VERSION } from '../lib/version.ts';
import type { JobEvent } from '../../shared/schemas/jobs.ts';

/** After attempt n (1-based), the wait before attempt n + 1; its length is the number of retries. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 7_200_000, 21_600_000];
const KEEP_MS = 7 * 24 * 3600_000;

/** What a delivery reports: a job's event, or a watch's registry changes (server/watches/). */
export type WebhookEvent = JobEvent | 'registry.changes';

export interface DeliveryDoc {
  /** The `Prospecta-Delivery` id. */
  _id: string;
  /** The job whose event it is, or the watch: deliveries are shared fairly between them. */
  jobId: string;
  workspaceId: string;
  type: WebhookEvent;
  url: string;
  secret: string;
  /** The exact bytes every attempt sends (and signs). */
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  /** An attempt is out (set when taken, unset with its outcome): one a dead process left is due again. */
  sending?: boolean;
  lastError: string | null;
  createdAt: Date;
  expiresAt: Date;
}

const DELIVERIES = 'webhookDeliveries';

export const webhookIndexes: IndexDeclaration[] = [
  { collection: DELIVERIES, keys: { status: 1, nextAttemptAt: 1 } },
  // One job's oldest due deliveries, for the fair share.
  { collection: DELIVERIES, keys: { jobId: 1, status: 1, nextAttemptAt: 1 } },
  { collection: DELIVERIES, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
];

/** Attempts one process has out at once (the webhook limiter's concurrency). */
export const MAX_IN_FLIGHT = 32;
/** The most of them one workspace holds, so another's delivery always finds a place. */
const WORKSPACE_SHARE = MAX_IN_FLIGHT / 2;
/** How long the list of jobs with due deliveries is reused before it is read again. */
const LANES_TTL_MS = 500;

/** A job with due deliveries, in its workspace. */
interface Lane {
  workspaceId: string;
  jobId: string;
}

export function signature(secret: string, unixSeconds: number, body: string): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export interface WebhookOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** The clock deliveries are scheduled by (tests move it instead of waiting). */
  now: () => number;
  log: Logger;
}

export class Webhooks {
  readonly deliveries: Collection<DeliveryDoc>;
  private readonly limiter = createLimiter('webhooks', { maxConcurrent: MAX_IN_FLIGHT });
  private readonly client: OutboundClient;
  /** Attempts out now, in all and per workspace. */
  private inFlight = 0;
  private readonly inFlightOf = new Map<string, number>();
  /** Where the round of workspaces starts next, so the first in the list is not always served first. */
  private turn = 0;
  /**
   * Each workspace's turn among its jobs, kept across passes: a pass mostly has one place to give
   * (an attempt just ended), and a round begun afresh at each pass would give it to the job the
   * list names first, so a job behind another's backlog in its workspace waited for all of it.
   */
  private readonly jobTurn = new Map<string, number>();
  /** The last list of jobs with due deliveries, and when it was read (`performance.now()`: tests move `now`). */
  private lanes: { at: number; lanes: Lane[] } | null = null;
  /**
   * Moved by each enqueue of a job the list lacks: a list whose read began before is not kept. On
   * MongoDB the read takes a while, and a list read just before a new job's delivery was stored,
   * but kept after it, left that job out of the places freed for half a second.
   */
  private lanesEpoch = 0;
  private pumping: Promise<number> | null = null;
  private closed = false;
  /** Aborts the attempts out when the process closes (see `close`). */
  private readonly closing = new AbortController();

  constructor(
    store: Store,
    readonly options: WebhookOptions,
  ) {
    this.deliveries = store.collection<DeliveryDoc>(DELIVERIES);
    // Retries are this module's own (stored, minutes apart): the client makes one attempt per call.
    this.client = new OutboundClient({ name: 'The webhook receiver', limiter: this.limiter, timeoutMs: options.timeoutMs, maxRetries: 0, service: 'webhooks' });
  }

  /** Stores an event for delivery under its id (`deliveryId`), once; resolves once it is durable. */
  async enqueue(event: { id: string; jobId: string; workspaceId: string; type: WebhookEvent; url: string; secret: string; payload: object }): Promise<void> {
    const now = this.options.now();
    // A watch's delivery names its watch in its payload; a job's names the job.
    const lane = event.type === 'registry.changes' ? {} : { jobId: event.jobId };
    const body = JSON.stringify({ type: event.type, ...lane, ...event.payload, at: new Date(now).toISOString() });
    try {
      await this.deliveries.insertOne({
        _id: event.id,
        jobId: event.jobId,
        workspaceId: event.workspaceId,
        type: event.type,
        url: event.url,
        secret: event.secret,
        body,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: new Date(now),
        lastError: null,
        createdAt: new Date(now),
        expiresAt: new Date(now + KEEP_MS),
      });
    } catch (err) {
      // Stored already: the same event enqueued again after a crash.
      if (!isDuplicateKeyError(err)) throw err;
    }
    // A job not in the list of those with due deliveries is looked for at the next pass, not after the list's age.
    if (!this.lanes?.lanes.some((lane) => lane.jobId === event.jobId)) {
      this.lanes = null;
      this.lanesEpoch++;
    }
  }

  /**
   * Sends nothing more for a job or watch (a deleted watch): its pending deliveries end `failed`
   * with `reason`. Resolves with those no attempt had taken, which no receiver can have seen (an
   * attempt out still stores its outcome: a 2xx is `delivered`).
   */
  async drop(jobId: string, reason: string): Promise<DeliveryDoc[]> {
    const unsent: DeliveryDoc[] = [];
    const ended = { $set: { status: 'failed' as const, lastError: reason } };
    for (const delivery of await this.deliveries.find({ jobId, status: 'pending', attempts: 0 }).toArray()) {
      // Taken meanwhile (`take` counts the attempt): sent, so not among the unsent.
      if ((await this.deliveries.updateOne({ _id: delivery._id, status: 'pending', attempts: 0 }, ended)).matchedCount === 1) unsent.push(delivery);
    }
    await this.deliveries.updateMany({ jobId, status: 'pending' }, ended);
    return unsent;
  }

  /**
   * Starts attempts of due deliveries in the free places, shared fairly (see the header), each at
   * most once across instances; resolves with how many it started, without waiting for them.
   */
  sendDue(): Promise<number> {
    // One pass at a time: a pass asked for meanwhile would find the same places.
    this.pumping ??= this.fill().finally(() => (this.pumping = null));
    return this.pumping;
  }

  private async fill(): Promise<number> {
    let started = 0;
    if (this.closed || this.inFlight >= MAX_IN_FLIGHT) return 0;
    const now = this.options.now();
    const lanes = await this.dueLanes(now);
    // Each workspace's jobs, in the order the list gave them; the workspaces' round starts at `turn`.
    const byWorkspace = new Map<string, Lane[]>();
    for (const lane of lanes) byWorkspace.set(lane.workspaceId, [...(byWorkspace.get(lane.workspaceId) ?? []), lane]);
    const workspaces = [...byWorkspace.keys()];
    for (const workspaceId of this.jobTurn.keys()) if (!byWorkspace.has(workspaceId)) this.jobTurn.delete(workspaceId);
    if (workspaces.length === 0) return 0;
    this.turn = (this.turn + 1) % workspaces.length;
    const order = [...workspaces.slice(this.turn), ...workspaces.slice(0, this.turn)];
    const queues = new Map<string, DeliveryDoc[]>();
    const free = () => MAX_IN_FLIGHT - this.inFlight;
    for (let progress = true; progress && free() > 0; ) {
      progress = false;
      for (const workspaceId of order) {
        if (free() <= 0) break;
        if ((this.inFlightOf.get(workspaceId) ?? 0) >= WORKSPACE_SHARE) continue;
        const jobs = byWorkspace.get(workspaceId)!;
        const turn = this.jobTurn.get(workspaceId) ?? 0;
        this.jobTurn.set(workspaceId, turn + 1);
        const lane = jobs[turn % jobs.length]!;
        let queue = queues.get(lane.jobId);
        if (!queue) {
          queue = await this.deliveries
            .find({ jobId: lane.jobId, status: 'pending', nextAttemptAt: { $lte: new Date(now) } }, { sort: { nextAttemptAt: 1 }, limit: WORKSPACE_SHARE })
            .toArray();
          queues.set(lane.jobId, queue);
        }
        const delivery = queue.shift();
        if (!delivery) continue;
        progress = true;
        if (await this.take(delivery, now)) {
          started++;
          this.start(delivery);
        }
      }
      // Jobs of a workspace whose queue ran dry are dropped from its round.
      for (const [workspaceId, jobs] of byWorkspace) {
        const left = jobs.filter((lane) => (queues.get(lane.jobId)?.length ?? 1) > 0);
        if (left.length === 0) byWorkspace.delete(workspaceId);
        else byWorkspace.set(workspaceId, left);
      }
      for (let i = order.length - 1; i >= 0; i--) if (!byWorkspace.has(order[i]!)) order.splice(i, 1);
    }
    return started;
  }

  /** The jobs with due deliveries, read at most every LANES_TTL_MS (a backlog of 10,000 is not counted at every pass). */
  private async dueLanes(now: number): Promise<Lane[]> {
    if (this.lanes && performance.now() - this.lanes.at < LANES_TTL_MS) return this.lanes.lanes;
    const epoch = this.lanesEpoch;
    const groups = await this.deliveries
      .aggregate<{ _id: Lane }>([
        { $match: { status: 'pending', nextAttemptAt: { $lte: new Date(now) } } },
        { $group: { _id: { workspaceId: '$workspaceId', jobId: '$jobId' }, n: { $sum: 1 } } },
      ])
      .toArray();
    const lanes = groups.map((g) => g._id);
    if (epoch === this.lanesEpoch) this.lanes = { at: performance.now(), lanes };
    return lanes;
  }

  /** Taken by moving its next attempt past this one's timeout: another runner skips it, and it is due again if this process dies. */
  private async take(delivery: DeliveryDoc, now: number): Promise<boolean> {
    const taken = await this.deliveries.updateOne(
      { _id: delivery._id, status: 'pending', nextAttemptAt: delivery.nextAttemptAt },
      { $set: { nextAttemptAt: new Date(now + this.options.timeoutMs + 30_000), sending: true }, $inc: { attempts: 1 } },
    );
    return taken.matchedCount === 1;
  }

  /** An attempt out, counted in its workspace's share; once it ends, the place goes to the next due delivery. */
  private start(delivery: DeliveryDoc): void {
    const { workspaceId } = delivery;
    this.inFlight++;
    this.inFlightOf.set(workspaceId, (this.inFlightOf.get(workspaceId) ?? 0) + 1);
    void this.attempt({ ...delivery, attempts: delivery.attempts + 1 })
      .catch((err: unknown) => {
        if (!this.closed) this.options.log.warn({ err, deliveryId: delivery._id }, 'webhook delivery: its outcome was not stored');
      })
      .finally(() => {
        this.inFlight--;
        const left = (this.inFlightOf.get(workspaceId) ?? 1) - 1;
        if (left > 0) this.inFlightOf.set(workspaceId, left);
        else this.inFlightOf.delete(workspaceId);
        if (!this.closed) void this.sendDue().catch(() => {});
      });
  }

  private async attempt(delivery: DeliveryDoc): Promise<void> {
    let failure: string | null = null;
    try {
      await this.client.call((signal) => this.post(delivery, AbortSignal.any([signal, this.closing.signal])), {
        classify: (err, timeout) => timeout ?? { kind: 'failed', failure: err instanceof BlockedAddressError ? err.message : ((err as NodeJS.ErrnoException).code ?? (err as Error).message) },
      });
    } catch (err) {
      failure = (err as Error).message;
    }
    // Cut short by `close`: left taken, as a dead process leaves it, to be sent again (`resumeAbandoned`).
    if (this.closed) return;
    const now = this.options.now();
    if (failure === null) {
      await this.deliveries.updateOne({ _id: delivery._id }, { $set: { status: 'delivered', lastError: null, sending: false } });
      return;
    }
    const retry = RETRY_DELAYS_MS[delivery.attempts - 1];
    this.options.log.info({ deliveryId: delivery._id, jobId: delivery.jobId, attempt: delivery.attempts, failure }, 'webhook delivery failed');
    await this.deliveries.updateOne(
      { _id: delivery._id },
      retry === undefined
        ? { $set: { status: 'failed', lastError: failure, sending: false } }
        : { $set: { nextAttemptAt: new Date(now + retry), lastError: failure, sending: false } },
    );
  }

  /**
   * Makes due now the attempts a dead process left out, for a store only this process uses (the
   * embedded store, at start-up), instead of waiting out their timeout: each is sent again at the
   * next pass, under its same `Prospecta-Delivery` id. Across instances (MongoDB) they wait it out.
   */
  async resumeAbandoned(): Promise<number> {
    const resumed = await this.deliveries.updateMany({ status: 'pending', sending: true }, { $set: { nextAttemptAt: new Date(this.options.now()), sending: false } });
    return resumed.modifiedCount;
  }

  private post(delivery: DeliveryDoc, signal: AbortSignal): Promise<{ value: true } | { kind: 'failed'; failure: string }> {
    const url = new URL(delivery.url);
    const t = Math.floor(this.options.now() / 1000);
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(
        url,
        {
          method: 'POST',
          signal,
          ...(this.options.allowPrivate ? {} : { lookup: guardedLookup({ allowLoopback: false }) }),
          headers: {
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(delivery.body),
            'User-Agent': `prospecta/${VERSION} (webhooks)`,
            'Prospecta-Delivery': delivery._id,
            'Prospecta-Signature': signature(delivery.secret, t, delivery.body),
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          // The status is the answer: a receiver that keeps a body coming after its 2xx has taken
          // the delivery, and sending it again would repeat it. The body is not ours to read: it is
          // drained (so the socket may be reused) until it ends or the attempt's timeout cuts it.
          res.on('error', () => {});
          res.resume();
          resolve(status >= 200 && status < 300 ? { value: true } : { kind: 'failed', failure: `HTTP ${status}` });
        },
      );
      req.on('error', reject);
      req.end(delivery.body);
    });
  }

  async close(): Promise<void> {
    // Attempts out are aborted, not waited for: a receiver holding one would hold the shutdown up
    // to its timeout. Each is sent again under its id, as one a dead process left (`resumeAbandoned`).
    this.closed = true;
    this.closing.abort();
    await closeLimiter(this.limiter);
  }
}
