/**
 * Exports: `exportCompanies` checks the filters as the search would (a bad one is a 400 before
 * anything is queued) and stores an export job; `getJobExport` serves the file such a job wrote,
 * up to its last checkpoint. The job itself is read, cancelled and signed by the jobs API.
 */
import { DEFAULT_EXPORT_ROWS, EXPORT_MEDIA_TYPES } from '../../shared/schemas/exports.ts';
import { operations } from '../../shared/operations/index.ts';
import { authorize } from '../auth/principal.ts';
import type { Companies } from '../companies/companies.ts';
import { planSearch } from '../companies/search-plan.ts';
import { checkAll, notFound, ServiceError } from '../lib/errors.ts';
import { FileAnswer } from '../lib/file-answer.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { JobRunner } from '../jobs/runner.ts';
import { checkWebhookUrl } from '../jobs/webhook-url.ts';
import type { Handler, HandlerContext } from '../invocation/handler.ts';
import type { Exporter } from './exporter.ts';
import { stat } from 'node:fs/promises';

export interface ExportDeps {
  jobs: Jobs;
  companies: Pick<Companies, 'activities'>;
  exporter: Pick<Exporter, 'fileOf'>;
  runner: Pick<JobRunner, 'wake'>;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may go to private addresses. */
  webhookAllowPrivate: boolean;
}

export function createExportHandlers({ jobs, companies, exporter, runner, webhookAllowPrivate }: ExportDeps) {
  const exportCompanies: Handler<'exportCompanies'> = async (input, ctx) => {
    const { format, maxRows, webhook: hook, ...filters } = input;
    const [, webhook] = await checkAll(
      // Refused now, as the search refuses them, rather than when the job runs.
      async () => void planSearch(filters, await companies.activities()),
      async () => (hook ? { url: (await checkWebhookUrl(hook.url, webhookAllowPrivate)).toString(), secret: hook.secret, events: ['job.finished' as const] } : null),
    );
    const job = await jobs.createExport(
      { workspaceId: ctx.workspaceId, webhook, principal: ctx.principal! },
      { format, filters, maxRows: await rowsWithin(maxRows ?? DEFAULT_EXPORT_ROWS, ctx) },
    );
    runner.wake();
    return { jobId: job._id, status: 'queued' };
  };

  const getJobExport: Handler<'getJobExport'> = async (input, ctx) => {
    const job = await jobs.get(ctx.workspaceId, input.jobId);
    if (!job?.export) throw notFound('Export');
    authorize({ principal: ctx.principal, refused: null }, operations.exportCompanies);
    const path = exporter.fileOf(job);
    // Gone from this instance's DATA_DIR (another instance's disk, removed by hand): nothing to serve.
    const written = await stat(path).catch(() => null);
    if (!written) throw notFound('Export file');
    const { format, bytes } = job.export;
    const answer = new FileAnswer(EXPORT_MEDIA_TYPES[format], `export-${job._id}.${format}`, path, Math.min(bytes, written.size));
    // The registry documents the answer as the file's text; the HTTP binding sends the file itself.
    return answer;
  };

  return { exportCompanies, getJobExport };
}

/**
 * The rows an export may write: those asked for, and no more than the call's own cap pays for (an
 * agent message's `maxCredits` left), so an export started by the agent cannot spend past it in
 * the background. Nothing left to pay with is a 402 now rather than an empty job.
 */
async function rowsWithin(asked: number, ctx: HandlerContext): Promise<number> {
  const { cap } = await ctx.budget();
  const unit = ctx.price(1);
  if (cap === undefined || unit === 0) return asked;
  const rows = Math.min(asked, Math.floor(cap / unit));
  if (rows < 1) throw new ServiceError('insufficient_credits', `This call may spend at most ${cap} credits, and a row costs ${unit}; nothing was started.`);
  return rows;
}
