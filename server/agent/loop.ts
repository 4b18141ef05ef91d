/**
 * One message to the agent: the model is asked, the tools it calls run (several at once when it
 * asks for several), their results go back to it as tool messages, until it answers without a
 * call or the message's steps are spent. Every step is an event as it happens; the exchange is
 * stored in the conversation at the end, whatever ended it.
 */
import type { InputOf, StreamEventOf } from '../../shared/operations/index.ts';
import type { Llm } from '../ai/llm.ts';
import { framing as newFraming } from '../ai/untrusted-data.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Tool } from '../tools/tools.ts';
import type { HandlerContext } from '../invocation/handler.ts';
import type { StillActing } from '../auth/still-acting.ts';
import type { Conversations, StoredMessage } from './conversations.ts';
import { fitToBudget, systemPrompt } from './prompt.ts';
import { functionsOf, isPaidTool, offeredTools, parseArguments, refused, runTool, startsPaidWork, toolCallKey, writes, type ToolCallOutcome } from './tool-calls.ts';

export type AgentEvent = StreamEventOf<'agentChat'>;

export interface ChatSetup {
  llm: Llm;
  ctx: HandlerContext;
  input: InputOf<'agentChat'>;
  conversationId: string;
  isNew: boolean;
  history: StoredMessage[];
  maxSteps: number;
  /** Where the conversation is saved once the message ends. */
  conversations: Pick<Conversations, 'save'>;
  /** Whether the message's credential still acts: asked before each step, as a job asks before each item. */
  stillActing: StillActing;
}

/** Room left for the answer itself. */
export const ANSWER_TOKENS = 1500;

/** The events of one message, in the order they happen. Errors before the first event are thrown (an HTTP status). */
export async function* agentEvents(setup: ChatSetup): AsyncGenerator<AgentEvent> {
  const queue: AgentEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: { err: unknown } | undefined;
  const emit = (event: AgentEvent) => {
    queue.push(event);
    wake?.();
  };
  const producer = runMessage(setup, emit).then(
    () => void (ended = true),
    (err: unknown) => void ((failure = { err }), (ended = true)),
  );
  void producer.then(() => wake?.());
  for (;;) {
    if (queue.length > 0) {
      yield queue.shift()!;
      continue;
    }
    if (ended) {
      if (failure) throw failure.err;
      return;
    }
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
}

async function runMessage(setup: ChatSetup, emit: (event: AgentEvent) => void): Promise<void> {
  const { llm, ctx, input, maxSteps } = setup;
  const framing = newFraming();
  const system = systemPrompt(framing, maxSteps);
  const tools = offeredTools({ principal: ctx.principal, refused: null });
  const functions = functionsOf(tools);
  const current: StoredMessage[] = [{ role: 'user', content: input.message, at: new Date(), ...(input.context ? { context: input.context } : {}) }];
  const spent: Spent = { steps: 0, credits: 0, committed: 0, jobs: [] };
  let started = false;
  const send = (event: AgentEvent) => {
    started = true;
    emit(event);
  };

  // A message runs for as long as its model and tools take: a credential revoked (or a member
  // removed) meanwhile stops it before its next model call and before its next tool calls, so
  // nothing more is charged to it, as its next request would be refused.
  const revoked = async () => ctx.principal !== null && !(await setup.stillActing(ctx.principal));
  try {
    for (let turn = 0; !ctx.signal.aborted; turn++) {
      // The first model call follows the request's own check of the credential.
      if (turn > 0 && (await revoked())) throw credentialRevoked();
      const exhausted = spent.steps >= maxSteps;
      const answer = await llm.chatWithTools({
        messages: fitToBudget(system, setup.history, current, functions, llm.settings.maxPromptTokens - ANSWER_TOKENS, framing),
        tools: functions,
        toolChoice: exhausted ? 'none' : 'auto',
        maxTokens: ANSWER_TOKENS,
        stream: ctx.answer === 'events',
        onText: (delta) => send({ event: 'text', data: { delta } }),
        workspaceId: ctx.workspaceId,
        purpose: 'agent',
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (ctx.answer !== 'events' && answer.text) send({ event: 'text', data: { delta: answer.text } });
      // Past the step limit the model was told to answer; calls it asks for anyway are not made.
      const calls = exhausted ? [] : answer.toolCalls;
      current.push({
        role: 'assistant',
        content: answer.text,
        at: new Date(),
        ...(calls.length ? { toolCalls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
      });
      if (calls.length === 0) break;
      if (await revoked()) {
        // Each call the model made is answered in the history, as one the client's hang-up stopped.
        current.push(...calls.map((call) => notRun(call, 'unauthorized', 'Not run: the credential of this message was revoked.')));
        throw credentialRevoked();
      }
      // Where this answer stands in the conversation: with the call's place in it, names the call
      // for its idempotency key even when the model numbers call ids afresh in each answer.
      const answerAt = setup.history.length + current.length - 1;
      current.push(...(await runCalls(calls, tools, setup, spent, send, answerAt)));
    }
  } catch (err) {
    if (!ctx.signal.aborted) {
      if (!started) throw err;
      if (!(err instanceof ServiceError)) ctx.log.error({ err }, 'agent message failed');
      const body = err instanceof ServiceError ? { error: err.code, message: err.message } : { error: 'internal_error', message: 'The agent failed.' };
      send({ event: 'error', data: body });
    }
  }
  // Stored even when the client left: what was asked, answered and charged stays on record.
  await setup.conversations.save(ctx.workspaceId, setup.conversationId, setup.isNew, current);
  if (!ctx.signal.aborted) {
    spent.credits += await spentByJobs(ctx, spent.jobs);
    send({ event: 'done', data: { conversationId: setup.conversationId, creditsCharged: spent.credits, steps: spent.steps } });
  }
}

type Call = { id: string; name: string; arguments: string };

/** What a message has used: its steps, what its calls charged, and the jobs they started. */
interface Spent {
  steps: number;
  credits: number;
  /** The caps of the jobs it started: spent as far as the message's own cap is concerned. */
  committed: number;
  jobs: string[];
}

/**
 * What the jobs a message started have charged by the time it ends: part of what the message
 * cost (each job's own cap, taken from the message's, bounds what it spends after).
 */
async function spentByJobs(ctx: HandlerContext, jobIds: string[]): Promise<number> {
  let total = 0;
  for (const jobId of jobIds) {
    try {
      const outcome = await ctx.invoke('getJob', { params: { jobId } }, { signal: ctx.signal });
      if (outcome.kind === 'value') total += (outcome.value as { creditsCharged: number }).creditsCharged;
    } catch (err) {
      ctx.log.warn({ err, jobId }, "agent: a job's charges could not be read");
    }
  }
  return total;
}

/**
 * The calls of one model turn, each announced, then run: free ones at once; paid ones at once
 * too unless the message has a credit cap, then one after another so the cap is checked against
 * what was really spent. Every call is a step, a malformed one too (an unknown tool, arguments
 * that are not one JSON object), so a model that only writes nonsense still runs out of steps.
 * Calls past the step limit are refused to the model. Resolves with the tool messages in the
 * order the model asked.
 */
async function runCalls(
  calls: Call[],
  tools: Map<string, Tool>,
  setup: ChatSetup,
  spent: Spent,
  send: (event: AgentEvent) => void,
  answerAt: number,
): Promise<StoredMessage[]> {
  const { ctx, input, maxSteps } = setup;
  const cap = input.maxCredits;
  let paidTurn: Promise<unknown> = Promise.resolve();
  let allowed = maxSteps - spent.steps;

  const outcomes = calls.map(async (call, index): Promise<StoredMessage | null> => {
    const tool = tools.get(call.name);
    const args = parseArguments(call.arguments);
    send({ event: 'tool_call', data: { callId: call.id, tool: call.name, input: args instanceof ServiceError ? {} : args, writes: tool ? writes(tool) : false } });

    let outcome: ToolCallOutcome | null;
    if (allowed <= 0) outcome = refused('invalid_request', `Not run: this message may make at most ${maxSteps} tool calls.`);
    else {
      allowed--;
      spent.steps++;
      if (!tool) outcome = refused('invalid_request', `There is no tool named ${call.name}; use one of the tools offered.`);
      else if (args instanceof ServiceError) outcome = refused(args.code, args.message);
      else {
        const key = toolCallKey(setup.conversationId, answerAt, index, call.id);
        const run = () => runCapped(tool, args, ctx, cap, spent, key);
        if (cap !== undefined && spends(tool)) {
          const mine = paidTurn.then(run);
          paidTurn = mine.catch(() => undefined);
          outcome = await mine;
        } else outcome = await run();
      }
    }
    if (!outcome) {
      spent.steps--;
      return null;
    }
    spent.credits += outcome.creditsCharged;
    if (outcome.job) {
      spent.jobs.push(outcome.job.jobId);
      spent.committed += outcome.job.maxCredits ?? 0;
    }
    send({
      event: 'tool_result',
      data: {
        callId: call.id,
        tool: call.name,
        isError: outcome.isError,
        creditsCharged: outcome.creditsCharged,
        ...(outcome.error ? { error: outcome.error } : {}),
        ...(outcome.job ? { job: outcome.job } : {}),
      },
    });
    return { role: 'tool', content: outcome.content, at: new Date(), callId: call.id, tool: call.name };
  });
  const messages = await Promise.all(outcomes);
  // Every call the model made needs its answer in the history, even one the client's hang-up stopped.
  return messages.map((m, i) => m ?? notRun(calls[i]!, 'cancelled', 'Not run: the user left.'));
}

/** The tool message of a call that was not run. */
function notRun(call: Call, error: string, message: string): StoredMessage {
  return { role: 'tool', content: JSON.stringify({ error, message }), at: new Date(), callId: call.id, tool: call.name };
}

const credentialRevoked = () =>
  new ServiceError('unauthorized', 'The credential of this message was revoked (or its member removed) while it ran: nothing more was done or charged.');

/** Whether a call spends credits, now or through the job it starts. */
const spends = (tool: Tool) => isPaidTool(tool) || startsPaidWork(tool);

/**
 * A call, unless the client left. A paid one runs within what is left of the message's cap (less
 * the caps of the jobs it started), as the pipeline's own limit (`maxCredits`): payment.ts refuses
 * it before it starts once nothing is left, refuses a charge past it, and caps the budget a tool
 * plans its paid work with; a job started gets it as its own cap.
 */
async function runCapped(tool: Tool, args: Record<string, unknown>, ctx: HandlerContext, cap: number | undefined, spent: Spent, key: string): Promise<ToolCallOutcome | null> {
  if (ctx.signal.aborted) return null;
  return runTool(tool, args, ctx, key, cap === undefined || !spends(tool) ? undefined : Math.max(0, cap - spent.credits - spent.committed));
}
