/**
 * Sends each newly imported release's changes to the watches, run at every pass of the jobs'
 * runner (the import runs in the CLI process; it records the comparison in `change_releases`, and
 * the server picks it up here).
 *
 * A comparison not yet planned gets one `watch_releases` document per watch that existed when it
 * was recorded (paused ones too: resuming sends what they missed), then is marked planned. Each
 * pending one is sent a part at a time: at most 500 changes, charged 1 credit each (the feed's
 * price) before it is stored for delivery through the jobs' webhooks (retries, the same
 * `Prospecta-Delivery` on every attempt, fair between workspaces). A kill at any point repeats at
 * most the step it was in, and none pays twice: the debit names the part and is looked for before
 * paying, and the delivery's id is derived from the part. A balance that cannot pay pauses the
 * watch, where it stands.
 */
import type { Logger } from 'pino';
import { operations } from '../../shared/operations/index.ts';
import { priceOf } from '../../shared/operations/types.ts';
import { CHANGES_PER_DELIVERY, type WatchDeliveryBody } from '../../shared/schemas/changes.ts';
import type { Credits } from '../credits/ledger.ts';
import type { Payment } from '../credits/payment.ts';
import { ServiceError } from '../lib/errors.ts';
import { COMPARISONS, type ChangeHistory, type ChangeQuery, type ComparisonDoc } from '../companies/changes/change-history.ts';
import type { Companies } from '../companies/companies.ts';
import { planSearch, type CompanyFilters } from '../companies/search-plan.ts';
import { deliveryId } from '../jobs/ending.ts';
import type { Webhooks } from '../jobs/webhooks.ts';
import { isDuplicateKeyError, type Collection, type Store } from '../store/port.ts';
import type { PausedReason, WatchDoc, WatchReleaseDoc, Watches } from './watches.ts';

/** How long a dispatcher holds a watch's release while it sends a part (another instance takes it after). */
const LEASE_MS = 60_000;
/** Parts sent per pass at most, so a pass stays short; the rest go at the next. */
const PARTS_PER_PASS = 20;
/** The ledger's operation for a delivery's charge. */
export const DELIVERY_OPERATION = 'watchDelivery';

export interface DispatcherDeps {
  store: Store;
  watches: Watches;
  history: ChangeHistory;
  companies: Pick<Companies, 'activities'>;
  credits: Pick<Credits, 'debit' | 'paidUnder' | 'refund'>;
  payment: Pick<Payment, 'requirePlan'>;
  webhooks: Pick<Webhooks, 'enqueue' | 'drop'>;
  now: () => number;
  log: Logger;
}

type Planned = ComparisonDoc & { planned?: boolean };

export class WatchDispatcher {
  private readonly comparisons: Collection<Planned>;

  constructor(private readonly deps: DispatcherDeps) {
    this.comparisons = deps.store.collection<Planned>(COMPARISONS);
  }

  /** One pass: plans new comparisons, then sends up to PARTS_PER_PASS parts, one watch after another. */
  async dispatch(): Promise<void> {
    await this.plan();
    const { releases } = this.deps.watches;
    const due = await releases
      .find({ status: 'pending', paused: false, leaseUntil: { $lte: new Date(this.deps.now()) } }, { sort: { createdAt: 1 }, limit: PARTS_PER_PASS })
      .toArray();
    for (const state of due) await this.sendPart(state);
  }

  private async plan(): Promise<void> {
    const fresh = await this.comparisons.find({ planned: { $ne: true } }).toArray();
    for (const comparison of fresh) {
      const recordedAt = new Date(comparison.recordedAt);
      for await (const watch of this.deps.watches.docs.find({ createdAt: { $lte: recordedAt } }, { projection: { _id: 1, workspaceId: 1, status: 1 } })) {
        try {
          await this.deps.watches.releases.insertOne({
            _id: `${watch._id}|${comparison._id}`,
            watchId: watch._id,
            workspaceId: watch.workspaceId,
            release: comparison._id,
            previousRelease: comparison.previousRelease,
            status: 'pending',
            paused: watch.status === 'paused',
            parts: null,
            sent: 0,
            after: null,
            leaseUntil: new Date(0),
            createdAt: new Date(this.deps.now()),
          });
        } catch (err) {
          if (!isDuplicateKeyError(err)) throw err;
        }
      }
      await this.comparisons.updateOne({ _id: comparison._id }, { $set: { planned: true } });
    }
  }

  /** Sends the next part of one watch's release, if the watch is active and this dispatcher takes it. */
  private async sendPart(state: WatchReleaseDoc): Promise<void> {
    const { watches, history, credits, webhooks, log } = this.deps;
    const watch = await watches.docs.findOne({ _id: state.watchId });
    if (!watch) {
      await watches.releases.deleteOne({ _id: state._id });
      return;
    }
    // Paused since it was read: left for the resume.
    if (watch.status !== 'active') return;
    const now = this.deps.now();
    const taken = await watches.releases.updateOne(
      { _id: state._id, status: 'pending', leaseUntil: state.leaseUntil },
      { $set: { leaseUntil: new Date(now + LEASE_MS) } },
    );
    if (taken.matchedCount !== 1) return;

    const release = async (fields: Partial<WatchReleaseDoc>) =>
      watches.releases.updateOne({ _id: state._id }, { $set: { leaseUntil: new Date(this.deps.now()), ...fields } });
    const filter = watch.filters ? planSearch(watch.filters as CompanyFilters, await this.deps.companies.activities()).filter : null;
    const query: Omit<ChangeQuery, 'limit'> = { releases: [state.release], kinds: watch.kinds, ...(watch.cnpjs ? { cnpjs: watch.cnpjs } : {}) };

    let parts = state.parts;
    if (parts === null) {
      parts = Math.ceil((await this.count(query, filter)) / CHANGES_PER_DELIVERY);
      if (parts === 0) return void (await release({ parts, status: 'done' }));
      await release({ parts, leaseUntil: new Date(now + LEASE_MS) });
    }
    const page = await history.page({ ...query, limit: CHANGES_PER_DELIVERY, ...(state.after ? { after: state.after } : {}) }, filter);
    const part = state.sent + 1;
    if (page.changes.length === 0) return void (await release({ status: 'done' }));

    const note = `watch ${watch._id} release ${state.release} part ${part}`;
    const pause = async (reason: PausedReason, why: string) => {
      await watches.pause(watch._id, reason);
      await release({});
      log.info({ watchId: watch._id, release: state.release, part }, `watch paused: ${why}`);
    };
    if ((await credits.paidUnder(watch.workspaceId, note, state.createdAt)) === 0) {
      // The plan gate every paid request meets (which also expires a trial's unspent credits):
      // a delivery is paid data as the feed's answer is.
      if (!(await this.hasPlan(watch.workspaceId))) return void (await pause('plan_required', 'its workspace has no active plan'));
      const price = priceOf(operations.searchCompanyChanges.credits, page.changes.length, null);
      const debit = await credits.debit(watch.workspaceId, price, DELIVERY_OPERATION, `${page.changes.length} registry changes (${note})`, note);
      if (!debit.ok) return void (await pause('insufficient_credits', 'the balance cannot pay its delivery'));
    }
    await webhooks.enqueue(delivery(watch, state, part, parts, page.changes));
    const at = new Date(this.deps.now());
    const last = part >= parts || page.more === null;
    await release({ sent: part, after: page.more, status: last ? 'done' : 'pending' });
    const seen = await watches.docs.updateOne({ _id: watch._id }, { $set: { lastDelivery: { release: state.release, changes: page.changes.length, at } } });
    // Deleted while this part was being paid for and stored: it is not sent either.
    if (seen.matchedCount === 0) await withdrawDeliveries(this.deps, watch);
  }

  private async hasPlan(workspaceId: string): Promise<boolean> {
    try {
      await this.deps.payment.requirePlan(workspaceId);
      return true;
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'plan_required') return false;
      throw err;
    }
  }

  /** How many changes match, read a page of positions at a time. */
  private async count(query: Omit<ChangeQuery, 'limit'>, filter: Parameters<ChangeHistory['page']>[1]): Promise<number> {
    let total = 0;
    let after = undefined as ChangeQuery['after'];
    for (;;) {
      const page = await this.deps.history.page({ ...query, limit: CHANGES_PER_DELIVERY, ...(after ? { after } : {}) }, filter);
      total += page.changes.length;
      if (!page.more) return total;
      after = page.more;
    }
  }
}

/**
 * What a deleted watch is owed: nothing more is sent to it, and the changes of each delivery not
 * yet sent are given back (a delivery is paid for before it is stored for sending). One an attempt
 * has taken may have reached the receiver: it stays paid.
 */
export async function withdrawDeliveries(
  deps: { webhooks: Pick<Webhooks, 'drop'>; credits: Pick<Credits, 'refund'> },
  watch: Pick<WatchDoc, '_id' | 'workspaceId'>,
): Promise<void> {
  for (const unsent of await deps.webhooks.drop(watch._id, 'the watch was deleted')) {
    const { changes, release, part } = JSON.parse(unsent.body) as WatchDeliveryBody;
    const price = priceOf(operations.searchCompanyChanges.credits, changes.length, null);
    const detail = `${changes.length} registry changes never sent (watch ${watch._id} release ${release} part ${part}: the watch was deleted)`;
    if (price > 0) await deps.credits.refund(watch.workspaceId, price, DELIVERY_OPERATION, detail);
  }
}

/** A part as a webhook delivery, its id derived from the part so that storing it again stores nothing. */
function delivery(watch: WatchDoc, state: WatchReleaseDoc, part: number, parts: number, changes: unknown[]) {
  return {
    id: deliveryId(watch._id, state.release, part),
    jobId: watch._id,
    workspaceId: watch.workspaceId,
    type: 'registry.changes' as const,
    url: watch.webhook.url,
    secret: watch.webhook.secret,
    payload: { watchId: watch._id, release: state.release, previousRelease: state.previousRelease, changes, part, parts },
  };
}
