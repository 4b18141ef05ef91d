import { operations } from '../../shared/operations/index.ts';
import type { JobOperation } from '../../shared/schemas/jobs.ts';
import { authorize } from '../auth/principal.ts';
import { notFound, ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';
import { checkItems } from './items.ts';
import { viewOf, type JobDoc } from './jobs.ts';
import { decodeCursor, resultsPage } from './results.ts';
import { checkWebhookUrl } from './webhook-url.ts';

export const startJob: Handler<'startJob'> = async (input, ctx) => {
  const items = checkItems(input.operation, input.items);
  const { config, jobs, jobRunner } = ctx.services;
  const webhook = input.webhook
    ? {
        url: (await checkWebhookUrl(input.webhook.url, config.jobs.webhookAllowPrivate)).toString(),
        secret: input.webhook.secret,
        events: input.webhook.events ?? ['job.finished' as const],
      }
    : null;
  const job = await jobs.create({
    workspaceId: ctx.workspaceId,
    operation: input.operation,
    items,
    webhook,
    maxCredits: input.maxCredits ?? null,
    principal: ctx.principal!,
  });
  jobRunner.wake();
  return { jobId: job._id, status: 'queued', total: job.total };
};

export const listJobs: Handler<'listJobs'> = async (_input, ctx) => {
  const scopes = new Set(ctx.principal!.scopes);
  const docs = await ctx.services.jobs.list(ctx.workspaceId);
  return { jobs: docs.filter((doc) => scopes.has(operations[doc.operation].scope)).map(viewOf) };
};

export const getJob: Handler<'getJob'> = async (input, ctx) => viewOf(await jobOf(input.jobId, ctx));

export const getJobResults: Handler<'getJobResults'> = async (input, ctx) => {
  const job = await jobOf(input.jobId, ctx);
  const after = input.cursor === undefined ? -1 : decodeCursor(input.cursor, job._id);
  return resultsPage(ctx.services.jobs, job, after, input.limit ?? 100);
};

export const cancelJob: Handler<'cancelJob'> = async (input, ctx) => {
  const job = await jobOf(input.jobId, ctx);
  const { jobs, jobRunner } = ctx.services;
  const ended = await jobs.end(job._id, 'cancelled');
  if (!ended) throw new ServiceError('job_finished', `The job has already ended (${(await jobs.get(ctx.workspaceId, job._id))?.status ?? job.status}).`);
  // Its items in flight here stop now, and its webhook goes out.
  jobRunner.wake();
  return viewOf(ended);
};

/** The workspace's job, whose operation's scope the caller holds; another workspace's is not found. */
async function jobOf(jobId: string, ctx: Parameters<Handler<'getJob'>>[1]): Promise<JobDoc> {
  const job = await ctx.services.jobs.get(ctx.workspaceId, jobId);
  if (!job) throw notFound('Job');
  authorize({ principal: ctx.principal, refused: null }, operations[job.operation as JobOperation]);
  return job;
}
