import { operations } from '../../shared/operations/index.ts';
import { authorize, mayCall } from '../auth/principal.ts';
import { notFound, ServiceError } from '../lib/errors.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import { checkItems, type CheckBody } from './items.ts';
import { viewOf, type JobDoc, type Jobs } from './jobs.ts';
import { decodeCursor, resultsPage } from './results.ts';
import type { JobRunner } from './runner.ts';
import { checkWebhookUrl } from './webhook-url.ts';

export interface JobDeps {
  jobs: Jobs;
  /** Woken when a job starts or is cancelled. */
  runner: Pick<JobRunner, 'wake'>;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may go to private addresses. */
  webhookAllowPrivate: boolean;
  /** Checks an item's input as the body of its operation. */
  checkBody: CheckBody;
}

export function createJobHandlers({ jobs, runner, webhookAllowPrivate, checkBody }: JobDeps) {
  const startJob: Handler<'startJob'> = async (input, ctx) => {
    const items = checkItems(checkBody, input.operation, input.items);
    // Within what the invocation may still spend (the agent message's cap left), so a job never
    // spends past the cap of the call that started it.
    const maxCredits = (await ctx.budget(input.maxCredits)).cap ?? null;
    const webhook = input.webhook
      ? {
          url: (await checkWebhookUrl(input.webhook.url, webhookAllowPrivate)).toString(),
          secret: input.webhook.secret,
          events: input.webhook.events ?? ['job.finished' as const],
        }
      : null;
    const job = await jobs.create({
      workspaceId: ctx.workspaceId,
      operation: input.operation,
      items,
      webhook,
      maxCredits,
      principal: ctx.principal!,
    });
    runner.wake();
    return { jobId: job._id, status: 'queued', total: job.total, maxCredits };
  };

  const listJobs: Handler<'listJobs'> = async (_input, ctx) => {
    const docs = await jobs.list(ctx.workspaceId);
    const caller = { principal: ctx.principal, refused: null };
    return { jobs: docs.filter((doc) => mayCall(caller, operations[doc.operation])).map(viewOf) };
  };

  const getJob: Handler<'getJob'> = async (input, ctx) => viewOf(await jobOf(input.jobId, ctx));

  const getJobResults: Handler<'getJobResults'> = async (input, ctx) => {
    const job = await jobOf(input.jobId, ctx);
    const after = input.cursor === undefined ? -1 : decodeCursor(input.cursor, job._id);
    return resultsPage(jobs, job, after, input.limit ?? 100);
  };

  const cancelJob: Handler<'cancelJob'> = async (input, ctx) => {
    const job = await jobOf(input.jobId, ctx);
    const ended = await jobs.end(job._id, 'cancelled');
    if (!ended) throw new ServiceError('job_finished', `The job has already ended (${(await jobs.get(ctx.workspaceId, job._id))?.status ?? job.status}).`);
    // Its items in flight here stop now, and its webhook goes out.
    runner.wake();
    return viewOf(ended);
  };

  /** The workspace's job, whose operation's scope the caller holds; another workspace's is not found. */
  async function jobOf(jobId: string, ctx: HandlerContext): Promise<JobDoc> {
    const job = await jobs.get(ctx.workspaceId, jobId);
    if (!job) throw notFound('Job');
    authorize({ principal: ctx.principal, refused: null }, operations[job.operation]);
    return job;
  }

  return { startJob, listJobs, getJob, getJobResults, cancelJob };
}
