/**
 * Jobs: a bulk-friendly operation run over up to 10,000 items in the background. They act for
 * the operation a job runs, so they carry no scope of their own (`actsFor`): starting a job needs
 * that operation's scope and plan, and reading or cancelling one needs the scope of its operation.
 */
import { EXPORT_MEDIA_TYPES, ExportFile } from '../schemas/exports.ts';
import { Job, JobCancelBody, JobList, JobParams, JobResults, JobResultsQuery, JobStartBody, JobStarted } from '../schemas/jobs.ts';
import { defineOperations } from './types.ts';

/**
 * What the operations on existing jobs share: they act for the job's own operation (`actsFor`
 * without a field: the pipeline's scope test is the job's operation's, checked by the handler),
 * need no plan and cost nothing.
 */
const ofAJob = {
  tag: 'Jobs',
  scope: null,
  actsFor: {},
  requiresPlan: false,
  credits: { rule: 'free' },
  extension: true,
} as const;

export const jobOperations = defineOperations({
  startJob: {
    method: 'POST',
    path: '/api/jobs',
    summary: 'Start a job',
    description:
      'Runs `operation` once per item in the background, each item exactly as one call of it (plan, credits, ledger), ' +
      "never charged twice, even across restarts. Items are checked against the operation's body before anything is " +
      "queued. Needs the operation's scope and plan; 2 jobs of a workspace run at once, others wait. " +
      'An optional webhook gets each event, signed with `Prospecta-Signature` (see the API guide).',
    tag: 'Jobs',
    scope: null,
    actsFor: { field: 'operation' },
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { body: JobStartBody },
    responses: { 202: JobStarted },
    errors: [400, 401, 402, 403, 409, 413, 422, 429, 500],
    // Charged per item, by the items' own operation: the start itself only creates.
    idempotent: true,
    // 10,000 items of a few hundred bytes each.
    maxBodyBytes: 8 * 1024 * 1024,
    extension: true,
  },
  listJobs: {
    method: 'GET',
    path: '/api/jobs',
    summary: 'List jobs',
    description: "The workspace's jobs, newest first, of the operations the credential's scopes allow.",
    ...ofAJob,
    request: {},
    responses: { 200: JobList },
    errors: [401, 429],
  },
  getJob: {
    method: 'GET',
    path: '/api/jobs/{jobId}',
    summary: 'Get a job',
    description: "A job's status and progress: items done and failed, credits charged.",
    ...ofAJob,
    request: { params: JobParams },
    responses: { 200: Job },
    errors: [400, 401, 403, 404, 429],
  },
  getJobResults: {
    method: 'GET',
    path: '/api/jobs/{jobId}/results',
    summary: "A job's results",
    description:
      "Finished items in item order, each the operation's own answer (as the synchronous call gives it) or its error. " +
      'While the job runs, a page stops before the first unfinished item; `nextCursor` is null once all were given. ' +
      'Kept 7 days after the job ends.',
    ...ofAJob,
    request: { params: JobParams, query: JobResultsQuery },
    responses: { 200: JobResults },
    errors: [400, 401, 403, 404, 429],
  },
  getJobExport: {
    method: 'GET',
    path: '/api/jobs/{jobId}/export',
    summary: "An export's file",
    description:
      'The file an export job wrote (`POST /api/companies/export`): CSV or NDJSON, every row in CNPJ order. While the job ' +
      'runs, the rows written so far; once it ends, all it wrote and was paid for. Kept 7 days after the job ends. ' +
      '404 for a job that is not an export.',
    ...ofAJob,
    request: { params: JobParams },
    responses: { 200: ExportFile },
    errors: [400, 401, 403, 404, 429],
    file: { mediaTypes: Object.values(EXPORT_MEDIA_TYPES) },
    tool: false,
  },
  cancelJob: {
    method: 'POST',
    path: '/api/jobs/{jobId}/cancel',
    summary: 'Cancel a job',
    description: 'Stops it: items not yet started never run; finished ones stay, charged. 409 `job_finished` when it had ended.',
    ...ofAJob,
    request: { params: JobParams, body: JobCancelBody },
    responses: { 200: Job },
    errors: [400, 401, 403, 404, 409, 429],
  },
});
