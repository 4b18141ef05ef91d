/**
 * What follows a job's end, whoever ended it (its runner: done, stopped, failed; a client:
 * cancelled, `Jobs.end`): the end marks the job `settling`, and a runner's next pass counts it
 * again from its items, frees its slot and stores its `job.finished` webhook. A process that dies
 * in between leaves the mark for the next pass; the delivery id is derived from the job, so
 * settling twice stores one delivery.
 */
import { createHash } from 'node:crypto';
import { viewOf, type JobDoc, type Jobs } from './jobs.ts';
import type { Webhooks } from './webhooks.ts';

/** A delivery id fixed by what it delivers, in UUID form, so storing it twice stores it once. */
export function deliveryId(...parts: Array<string | number>): string {
  const hex = createHash('sha256').update(parts.join('\0')).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Finishes the ending of ended jobs: counts, slot, webhook. `busy` names jobs whose items are
 * still in flight in this process (stopped by the end, finishing their writes): they are settled
 * at a later pass, so their counts include those items.
 */
export async function settleEnded(jobs: Jobs, webhooks: Webhooks, busy: (jobId: string) => boolean): Promise<void> {
  for (const job of await jobs.docs.find({ settling: true }, { limit: 20 }).toArray()) {
    if (!busy(job._id)) await settle(jobs, webhooks, job);
  }
}

async function settle(jobs: Jobs, webhooks: Webhooks, ended: JobDoc): Promise<void> {
  const job = await jobs.settle(ended);
  // An item's count is on its way: the job stays marked, for a later pass.
  if (!job) return;
  if (job.webhook?.events.includes('job.finished')) {
    await webhooks.enqueue({
      id: deliveryId(job._id, 'job.finished'),
      jobId: job._id,
      workspaceId: job.workspaceId,
      type: 'job.finished',
      url: job.webhook.url,
      secret: job.webhook.secret,
      payload: { job: viewOf(job) },
    });
  }
  await jobs.docs.updateOne({ _id: job._id }, { $set: { settling: false } });
}
