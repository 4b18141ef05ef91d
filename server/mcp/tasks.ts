/**
 * MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, on the 2026-07-28 revision)
 * over prospecta's jobs. A tool that starts a job (`Tool.task`), called by a client that declared
 * the extension in the request's client capabilities, answers a task instead of `{jobId}`; the
 * client follows it with `tasks/get` and stops it with `tasks/cancel`. Other clients, and the
 * 2025-11-25 revision, get the tool's own answer.
 *
 * A task is its job and nothing else: the task id is the job id, and every task method reads or
 * cancels the job through the pipeline (`getJob`, `cancelJob`) as the tools of those names do. So
 * a task lasts exactly as long as its stored job (a restart mid-task resumes the job, and the
 * task with it), another workspace's task is one that does not exist, and the scope a credential
 * needs is the job's.
 *
 * How a job's statuses read as a task's: queued and running are `working`; done and stopped
 * (maxCredits or the balance ran out; what was paid stays readable) are `completed`, with the job's
 * summary as the result; cancelled is `cancelled`; a failed job (its credential revoked, its plan
 * lost) is `completed` with an error result, the extension keeping `failed` for protocol faults.
 */
import type { CallToolResult, Server, ServerContext, StandardSchemaV1 } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Caller } from '../invocation/caller.ts';
import { ServiceError } from '../lib/errors.ts';
import { JOB_RETENTION_MS, type JobView } from '../jobs/jobs.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { toolName } from '../tools/tools.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import type { Sdk } from './sdk.ts';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a client need ask: a job's items take a second or more each. */
const POLL_INTERVAL_MS = 2_000;

export interface TaskContext {
  pipeline: Pipeline;
  caller: Caller;
  log: Logger;
  trace: TraceContext;
}

type TaskStatus = 'working' | 'completed' | 'cancelled';

/** Whether the request's client capabilities (2026-07-28 `_meta` envelope) declare the extension. */
export function declaresTasks(ctx: Pick<ServerContext, 'mcpReq'>): boolean {
  const capabilities = (ctx.mcpReq.envelope as Record<string, { extensions?: Record<string, unknown> } | undefined> | undefined)?.[
    'io.modelcontextprotocol/clientCapabilities'
  ];
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** `tools/call` of a task tool for a declaring client: the job it started (`{jobId}`), as a task. */
export async function createdTask(context: TaskContext, started: unknown, signal: AbortSignal): Promise<CallToolResult> {
  const { jobId } = started as { jobId: string };
  const job = await readJob(context, jobId, signal);
  // Flat, as the extension has it: the task's fields beside `resultType`, no `task` wrapper.
  return { resultType: 'task', ...taskOf(job) } as unknown as CallToolResult;
}

/**
 * `tasks/get`, `tasks/cancel` and `tasks/update` on a 2026-07-28 server instance. Each refuses a
 * client that did not declare the extension (-32021, as the revision has it for a capability the
 * request lacks), and answers an unknown task, another workspace's included, with -32602.
 */
export function registerTaskMethods(sdk: Sdk, server: Server, context: TaskContext): void {
  const { MissingRequiredClientCapabilityError } = sdk;
  const params = { params: taskIdParams };
  const guard = (ctx: ServerContext) => {
    if (!declaresTasks(ctx)) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  };

  server.setRequestHandler('tasks/get', params, async ({ taskId }, ctx) => {
    guard(ctx);
    return taskWithOutcome(await known(sdk, context, () => readJob(context, taskId, ctx.mcpReq.signal)));
  });

  // An empty acknowledgement, also for a task that had already ended: the client reads the
  // outcome with `tasks/get` (what was done before the cancel stays done, and charged).
  server.setRequestHandler('tasks/cancel', params, async ({ taskId }, ctx) => {
    guard(ctx);
    await known(sdk, context, async () => {
      try {
        await context.pipeline.invoke('cancelJob', context.caller, { params: { jobId: taskId } }, invokeOptions(context, ctx.mcpReq.signal));
      } catch (err) {
        if (!(err instanceof ServiceError && err.code === 'job_finished')) throw err;
      }
    });
    return {};
  });

  // A job never waits for input, so there is nothing to update: acknowledged, once the task is known.
  server.setRequestHandler('tasks/update', params, async ({ taskId }, ctx) => {
    guard(ctx);
    await known(sdk, context, () => readJob(context, taskId, ctx.mcpReq.signal));
    return {};
  });
}

/** The one parameter each task method takes (a Standard Schema, as the SDK asks of an extension method). */
const taskIdParams: StandardSchemaV1<unknown, { taskId: string }> = {
  '~standard': {
    version: 1,
    vendor: 'prospecta',
    validate: (value: unknown) =>
      typeof (value as { taskId?: unknown } | null)?.taskId === 'string'
        ? { value: value as { taskId: string } }
        : { issues: [{ message: 'params.taskId must be a string: the id a task-creating tools/call answered.' }] },
  },
};

async function readJob(context: TaskContext, jobId: string, signal: AbortSignal): Promise<JobView> {
  const outcome = await context.pipeline.invoke('getJob', context.caller, { params: { jobId } }, invokeOptions(context, signal));
  if (outcome.kind !== 'value') throw new Error('getJob answered a stream');
  return outcome.value as JobView;
}

function invokeOptions({ log, trace }: TaskContext, signal: AbortSignal) {
  return { log, trace, signal, binding: 'mcp' as const };
}

/**
 * Runs `read`, turning "no such job" (unknown, expired, another workspace's, or not an id at all)
 * into the revision's invalid-params error, any other refusal into a JSON-RPC error that says it,
 * and a fault of ours into an internal error that says no more than tools/call's would.
 */
async function known<T>({ ProtocolError, ProtocolErrorCode }: Sdk, { log }: TaskContext, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof ServiceError)) {
      log.error({ err }, 'task method failed');
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'Something went wrong on our side.');
    }
    if (err.code === 'not_found' || err.code === 'invalid_request') throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Task not found.');
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, err.message, { error: err.code });
  }
}

function statusOf(job: JobView): TaskStatus {
  switch (job.status) {
    case 'queued':
    case 'running':
      return 'working';
    case 'cancelled':
      return 'cancelled';
    default:
      return 'completed';
  }
}

/** An export job (`export_companies`) counts rows written, and has a file rather than results. */
const isExport = (job: JobView) => job.operation === 'exportCompanies';

/** The task's own fields, as `tools/call` and `tasks/get` both carry them. */
function taskOf(job: JobView) {
  const finished = job.done + job.failed;
  return {
    taskId: job.jobId,
    status: statusOf(job),
    statusMessage: isExport(job)
      ? `${job.status}: ${job.done} rows written${job.finishedAt ? '' : ` of at most ${job.total}`}, ${job.creditsCharged} credits charged`
      : `${job.status}: ${finished} of ${job.total} items finished (${job.failed} failed), ${job.creditsCharged} credits charged`,
    createdAt: job.createdAt,
    lastUpdatedAt: job.updatedAt,
    // A job is kept while it runs and 7 days after it ends: a lifetime known only once it has ended.
    ttlMs: job.finishedAt ? Date.parse(job.finishedAt) + JOB_RETENTION_MS - Date.parse(job.createdAt) : null,
    pollIntervalMs: POLL_INTERVAL_MS,
    // The job itself, for a client that reads numbers rather than the message.
    _meta: { 'prospecta/job': job },
  };
}

/** `tasks/get`: the task, and once its job has ended as a result, that result. */
function taskWithOutcome(job: JobView) {
  const task = taskOf(job);
  if (task.status !== 'completed') return task;
  // The job's summary, and where its items' results are read. Text only: the start tool's output
  // schema describes `{jobId}` as it was answered, which a finished job no longer matches.
  // An export's rows are a file, which only HTTP serves (no tool answers a file): its path is given.
  const summary = isExport(job)
    ? { ...job, file: `/v1/api/jobs/${job.jobId}/export` }
    : { ...job, results: { tool: toolName('getJobResults'), arguments: { jobId: job.jobId } } };
  const result: CallToolResult = { content: [{ type: 'text', text: JSON.stringify(summary) }], ...(job.status === 'failed' ? { isError: true } : {}) };
  return { ...task, result };
}
