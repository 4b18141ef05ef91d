/** The agent's operations: the chat (events, or one JSON answer) and its conversations. */
import { randomUUID } from 'node:crypto';
import type { InputOf, OutputOf } from '../../shared/operations/index.ts';
import { AGENT_CONTEXT_MAX_CHARS } from '../../shared/schemas/agent.ts';
import { requireLlm, type Llm } from '../ai/llm.ts';
import type { AgentLimits } from '../config.ts';
import type { StillActing } from '../auth/still-acting.ts';
import type { Payment } from '../credits/payment.ts';
import { invalidRequest, notFound } from '../lib/errors.ts';
import type { HandlerContext } from '../invocation/handler.ts';
import { conversationView, MAX_CONVERSATION_CHARS, summaryView, type Conversations } from './conversations.ts';
import { agentEvents, type AgentEvent, type ChatSetup } from './loop.ts';

export interface AgentDeps {
  /** null until a model is configured (503). */
  llm: Llm | null;
  conversations: Conversations;
  /** The free plan's daily messages. */
  payment: Pick<Payment, 'requireAgentMessage'>;
  /** AGENT_FREE_MESSAGES_PER_DAY and AGENT_MAX_STEPS. */
  limits: AgentLimits;
  /** Whether the message's credential still acts (not revoked, its member not removed), asked at each step. */
  stillActing: StillActing;
}

export function createAgentHandlers({ llm: model, conversations, payment, limits, stillActing }: AgentDeps) {
  function agentChat(input: InputOf<'agentChat'>, ctx: HandlerContext): AsyncIterable<AgentEvent> | Promise<OutputOf<'agentChat'>> {
    if (ctx.answer === 'value') return prepare(input, ctx).then((setup) => collapse(agentEvents(setup)));
    return (async function* () {
      yield* agentEvents(await prepare(input, ctx));
    })();
  }

  /** Everything that can refuse the message, in order, before anything is sent: 503, 400, 404, then the free allowance's 402. */
  async function prepare(input: InputOf<'agentChat'>, ctx: HandlerContext): Promise<ChatSetup> {
    const llm = requireLlm(model);
    // Sheet cells beyond the contract's total (as JSON) are refused before the model is asked.
    if (input.context && JSON.stringify(input.context).length > AGENT_CONTEXT_MAX_CHARS) {
      throw invalidRequest(`context is over ${AGENT_CONTEXT_MAX_CHARS / 1000} kB; select fewer rows or columns`);
    }
    let history: ChatSetup['history'] = [];
    if (input.conversationId) {
      const found = await conversations.get(ctx.workspaceId, input.conversationId);
      if (!found) throw notFound('Conversation');
      if (found.chars >= MAX_CONVERSATION_CHARS) {
        throw invalidRequest(`This conversation is full (${MAX_CONVERSATION_CHARS / 1_000_000} MB stored); start a new one (send no conversationId).`);
      }
      history = found.messages;
    }
    await payment.requireAgentMessage(ctx.workspaceId, limits.freeMessagesPerDay);
    return {
      llm,
      ctx,
      input,
      conversationId: input.conversationId ?? randomUUID(),
      isNew: !input.conversationId,
      history,
      maxSteps: limits.maxSteps,
      conversations,
      stillActing,
    };
  }

  async function listConversations(_input: InputOf<'listConversations'>, ctx: HandlerContext): Promise<OutputOf<'listConversations'>> {
    const docs = await conversations.list(ctx.workspaceId);
    return { conversations: docs.map(summaryView) };
  }

  async function getConversation(input: InputOf<'getConversation'>, ctx: HandlerContext): Promise<OutputOf<'getConversation'>> {
    const doc = await conversations.get(ctx.workspaceId, input.conversationId);
    if (!doc) throw notFound('Conversation');
    return conversationView(doc);
  }

  return { agentChat, listConversations, getConversation };
}

/** The events of one message as the one JSON answer. */
async function collapse(events: AsyncIterable<AgentEvent>): Promise<OutputOf<'agentChat'>> {
  let reply = '';
  const calls = new Map<string, OutputOf<'agentChat'>['toolCalls'][number]>();
  let error: OutputOf<'agentChat'>['error'];
  for await (const { event, data } of events) {
    if (event === 'text') reply += data.delta;
    else if (event === 'tool_call') calls.set(data.callId, { tool: data.tool, input: data.input, isError: false, creditsCharged: 0 });
    else if (event === 'tool_result') Object.assign(calls.get(data.callId) ?? {}, { isError: data.isError, creditsCharged: data.creditsCharged, ...(data.job ? { job: data.job } : {}) });
    else if (event === 'error') error = data;
    else if (event === 'done') {
      return { conversationId: data.conversationId, reply, toolCalls: [...calls.values()], creditsCharged: data.creditsCharged, ...(error ? { error } : {}) };
    }
  }
  throw new Error('the agent ended without a done event');
}
