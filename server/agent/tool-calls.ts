/**
 * The agent's tools: the tool definitions this credential may use as the agent (`mayCall`, the
 * rule `tools/list` uses too), offered as functions; and one tool call run exactly
 * as an MCP `tools/call` (through the pipeline, for the same caller), its outcome turned into the
 * JSON a `role: tool` message carries. A malformed call never reaches the pipeline and costs nothing.
 */
import { createHash } from 'node:crypto';
import { isPaid } from '../../shared/operations/types.ts';
import type { Caller } from '../invocation/caller.ts';
import type { FunctionTool } from '../ai/llm.ts';
import { ServiceError } from '../lib/errors.ts';
import { mergePages } from '../tools/merge-pages.ts';
import { visibleTools, type Tool } from '../tools/tools.ts';
import type { HandlerContext } from '../invocation/handler.ts';

export interface ToolCallOutcome {
  /** JSON for the model: the operation's body, or `{error, message}`. */
  content: string;
  isError: boolean;
  error?: string;
  creditsCharged: number;
  /** The job the call started, which goes on spending in the background within its cap. */
  job?: { jobId: string; maxCredits: number | null };
}

/** A tool result larger than this reaches the model cut short (still JSON), to leave room for the rest. */
const MAX_RESULT_CHARS = 24_000;

/** The tools this caller may call as the agent (`mayCall`: no DELETE among them), by name. */
export function offeredTools(caller: Caller): Map<string, Tool> {
  return new Map(visibleTools(caller, 'agent').map((tool) => [tool.definition.name, tool]));
}

export function functionsOf(tools: Map<string, Tool>): FunctionTool[] {
  return [...tools.values()].map(({ definition }) => ({
    name: definition.name,
    description: definition.description,
    parameters: definition.inputSchema,
  }));
}

/** Whether a tool can charge (the registry's credit rule). */
export const isPaidTool = (tool: Tool) => isPaid(tool.operation);

/**
 * Whether a tool starts work that charges after it answers: an operation acting for the one its
 * input names (`start_job`, whose items are paid calls). Within a message's cap it is run as a
 * paid call, and the job it starts carries what is left of the cap (jobs/handlers.ts).
 */
export const startsPaidWork = (tool: Tool) => tool.operation.actsFor?.field !== undefined;

/**
 * Whether a tool writes: the opposite of its MCP `readOnlyHint` (one rule, in server/tools/), so a
 * search or lookup, which only spends credits, does not count. Shown on each `tool_call` event,
 * since a write the model makes after reading a tool result may be an instruction smuggled into
 * that result.
 */
export const writes = (tool: Tool) => !tool.definition.annotations.readOnlyHint;

const failure = (err: ServiceError): ToolCallOutcome => ({
  content: JSON.stringify({ error: err.code, message: err.message }),
  isError: true,
  error: err.code,
  creditsCharged: 0,
});

export function refused(code: ServiceError['code'], message: string): ToolCallOutcome {
  return failure(new ServiceError(code, message));
}

/** The arguments as the model wrote them, if they are one JSON object. */
export function parseArguments(raw: string): Record<string, unknown> | ServiceError {
  let args: unknown;
  try {
    args = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    return new ServiceError('invalid_request', 'The arguments are not valid JSON; send one JSON object matching the tool\'s input schema.');
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return new ServiceError('invalid_request', 'The arguments must be one JSON object.');
  }
  return args as Record<string, unknown>;
}

/** Runs one call through the pipeline; every failure becomes a tool error, never a throw. */
export async function runTool(tool: Tool, args: Record<string, unknown>, ctx: HandlerContext, idempotencyKey?: string, maxCredits?: number): Promise<ToolCallOutcome> {
  let charged = 0;
  try {
    const outcome = await ctx.invoke(tool.operationId, tool.split(args), {
      signal: ctx.signal,
      ...(idempotencyKey ? { idempotencyKey } : {}),
      ...(maxCredits !== undefined ? { maxCredits } : {}),
    });
    const body = outcome.kind === 'value' ? outcome.value : await mergePages(outcome.events, async () => {});
    charged = outcome.receipt.credits;
    return { content: limited(JSON.stringify(body)), isError: false, creditsCharged: charged, ...(startsPaidWork(tool) ? { job: startedJob(body) } : {}) };
  } catch (err) {
    if (err instanceof ServiceError) return { ...failure(err), creditsCharged: charged };
    if (ctx.signal.aborted) return refused('internal_error', 'The request was cancelled.');
    ctx.log.error({ err, tool: tool.definition.name }, 'agent tool call failed');
    return refused('internal_error', 'Something went wrong on our side.');
  }
}

/**
 * The `Idempotency-Key` of one tool call: its conversation, the place of the model's answer in it,
 * the call's place in that answer and the call id name one call (model servers may number call
 * ids afresh in each answer, or repeat one), so the same call run again is answered from its first
 * run rather than charged twice, and two calls never share a key. Hashed: call ids are the
 * model's, of any length and alphabet.
 */
export function toolCallKey(conversationId: string, answerAt: number, index: number, callId: string): string {
  return `agent-${createHash('sha256').update(`${conversationId}\0${answerAt}\0${index}\0${callId}`).digest('hex')}`;
}

function startedJob(body: unknown): { jobId: string; maxCredits: number | null } {
  const { jobId, maxCredits } = body as { jobId: string; maxCredits: number | null };
  return { jobId, maxCredits };
}

function limited(json: string): string {
  if (json.length <= MAX_RESULT_CHARS) return json;
  return JSON.stringify({
    truncated: `The result was ${json.length} characters; only its beginning is shown. Ask for fewer results for more detail.`,
    beginning: json.slice(0, MAX_RESULT_CHARS),
  });
}
