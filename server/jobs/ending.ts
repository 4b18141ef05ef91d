/**
 * How a job ends, whoever ends it (its runner: done, stopped, failed; a client: cancelled): one
 * conditional status change, then the counts, the results' 7 days, the slot, and the
 * `job.finished` webhook. The change marks the job `settling` first, and a runner finishes what a
 * process that died in between left (`settleLeftovers`); the webhook's delivery id is derived
 * from the job, so doing that twice stores one delivery.
 */
import { createHash } from 'node:crypto';
import type { JobStatus } from '../../shared/schemas/jobs.ts';
import { viewOf, type JobDoc, type Jobs } from './jobs.ts';
import type { Webhooks } from './webhooks.ts';

/** A delivery id fixed by what it delivers, in UUID form, so storing it twice stores it once. */
export function deliveryId(...parts: Array<string | number>): string {
  const hex = createHash('sha256').update(parts.join('\0')).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex.slice(16, 17), 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function endJob(jobs: Jobs, webhooks: Webhooks, jobId: string, status: JobStatus, from?: JobStatus[]): Promise<JobDoc | null> {
  const ended = await jobs.end(jobId, status, from);
  if (!ended) return null;
  return settle(jobs, webhooks, ended);
}

/** Finishes the ending of jobs whose process died after their status changed. */
export async function settleLeftovers(jobs: Jobs, webhooks: Webhooks): Promise<void> {
  for (const job of await jobs.docs.find({ settling: true }, { limit: 20 }).toArray()) await settle(jobs, webhooks, job);
}

async function settle(jobs: Jobs, webhooks: Webhooks, ended: JobDoc): Promise<JobDoc> {
  const job = await jobs.settle(ended);
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
  return job;
}
