/**
 * The one client for language models: the official `openai` SDK pointed at any OpenAI-compatible
 * endpoint (`LLM_BASE_URL`: OpenAI, Azure OpenAI, OpenRouter, Ollama, vLLM, LM Studio…). Calls
 * go through the model's {@link OutboundClient}: its Bottleneck limiter, a timeout, and 429 and 5xx
 * retried through the limiter again, honouring `Retry-After`, a bounded number of times. Prompts
 * and answers have token caps; tokens are counted per workspace. Callers get text or an
 * {@link LlmError}, never an SDK error.
 */
import type Bottleneck from 'bottleneck';
import type OpenAI from 'openai';
import { loadWhenUsed } from '../lib/load-when-used.ts';
import type { LlmConfig } from '../config.ts';
import { ServiceError } from '../lib/errors.ts';
import { OutboundClient } from '../outbound/client.ts';
import type { Clock } from '../outbound/clock.ts';
import { closeLimiter, createLimiter, throttleFor } from '../outbound/limiter.ts';
import type { AttemptFailure } from '../outbound/retry.ts';
import { retryAfterMs } from '../outbound/retry-after.ts';
import type { IndexDeclaration, Store } from '../store/port.ts';
import { llmTokensUsed } from '../lib/metrics.ts';

/** Only a server with a model configured needs the SDK. */
const openai = loadWhenUsed<{ default: typeof OpenAI }>('openai');
import type { TraceContext } from '../lib/trace-context.ts';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Cap on the answer. */
  maxTokens: number;
  /** Ask for a JSON object (`response_format: json_object`). */
  json?: boolean;
  workspaceId: string;
  /** What the call was for, in the usage record. */
  purpose: string;
  signal: AbortSignal;
  /** The request's trace: the model call carries a child `traceparent`. */
  trace?: TraceContext;
}

export interface ChatAnswer {
  text: string;
  promptTokens: number;
  completionTokens: number;
}

/** A message of a conversation with tools, as the chat completions API takes it. */
export type ToolChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallRequest[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ToolCallRequest {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface FunctionTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolChatRequest {
  messages: ToolChatMessage[];
  tools: FunctionTool[];
  /** 'none' once the caller will run no more tools, so the model writes its answer. */
  toolChoice: 'auto' | 'none';
  maxTokens: number;
  /** Ask for the answer as server-sent deltas, each given to `onText` as it arrives. */
  stream: boolean;
  onText?: (delta: string) => void;
  workspaceId: string;
  purpose: string;
  signal: AbortSignal;
  trace?: TraceContext;
}

export interface ToolChatAnswer extends ChatAnswer {
  /** The calls the model asked for, arguments as it wrote them (possibly not JSON at all). */
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
}

/** What a prompt with tools weighs, by the same rough count as the prompt-size cap. */
export function estimatePromptTokens(messages: ToolChatMessage[], tools: FunctionTool[] = []): number {
  let n = tools.length ? estimateTokens(JSON.stringify(tools)) : 0;
  for (const m of messages) {
    n += estimateTokens(m.content ?? '') + 4;
    if (m.role === 'assistant') for (const call of m.tool_calls ?? []) n += estimateTokens(call.function.name + call.function.arguments) + 4;
  }
  return n;
}

/** The SDK's per-request headers: a child `traceparent`, or none. */
type TraceHeaders = { traceparent: string } | undefined;

/** Text already reached the caller when the answer broke off: another attempt would repeat it. */
class BrokenStream extends Error {}

/**
 * Why a model call gave nothing usable: `ai_unavailable` when the model is unreachable, busy
 * or slow, `ai_failed` when it answered but not usably. A ServiceError, so it reaches the client
 * as such, before any charge; callers with a fallback (the message writer) catch it.
 */
export class LlmError extends ServiceError {
  constructor(message: string, code: 'ai_unavailable' | 'ai_failed') {
    super(code, message);
  }
}

/** A rough count (about 4 characters a token in English and Portuguese) to keep prompts bounded. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

interface UsageDoc {
  _id: string;
  workspaceId: string;
  day: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  byPurpose: Record<string, number>;
}

export const aiUsageIndexes: IndexDeclaration[] = [{ collection: 'ai_usage', keys: { workspaceId: 1, day: -1 } }];

export interface LlmSettings {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  maxConcurrent: number;
  perMinute: number | undefined;
  maxPromptTokens: number;
  maxRetries: number;
}

export class Llm {
  private readonly client: OpenAI;
  private readonly limiter: Bottleneck;
  private readonly outbound: OutboundClient;

  constructor(
    readonly settings: LlmSettings,
    private readonly store: Store,
    redisUrl?: string,
    /** What waits between attempts (Retry-After, backoff). @default the system's */
    clock?: Clock,
  ) {
    const { default: OpenAIClient } = openai();
    this.client = new OpenAIClient({
      baseURL: settings.baseUrl,
      // Local servers (Ollama, vLLM) take no key, but the SDK insists on one.
      apiKey: settings.apiKey ?? 'none',
      // Retries and timeouts are the outbound client's, so retries count against the model's rate too.
      maxRetries: 0,
    });
    this.limiter = createLimiter(
      `llm:${settings.model}`,
      throttleFor({ maxConcurrent: settings.maxConcurrent, perMinute: settings.perMinute }),
      redisUrl ? { url: redisUrl } : undefined,
    );
    this.outbound = new OutboundClient({
      name: 'The model',
      limiter: this.limiter,
      timeoutMs: settings.timeoutMs,
      maxRetries: settings.maxRetries,
      backoffMs: 500,
      // Waiting longer than one answer may take, for a turn or a Retry-After, is not worth it.
      maxRetryAfterMs: settings.timeoutMs,
      maxQueueWaitMs: settings.timeoutMs,
      service: 'llm',
      clock,
    });
  }

  async chat(request: ChatRequest): Promise<ChatAnswer> {
    const promptTokens = request.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    if (promptTokens > this.settings.maxPromptTokens) {
      throw new ServiceError('invalid_request', `the context is too long for the model (about ${promptTokens} tokens; at most ${this.settings.maxPromptTokens})`);
    }
    const completion = await this.complete(request);
    const choice = completion.choices?.[0];
    const text = typeof choice?.message?.content === 'string' ? choice.message.content : '';
    if (choice?.finish_reason === 'content_filter') throw new LlmError('The model refused to answer (content filter).', 'ai_failed');
    if (!text.trim()) throw new LlmError('The model returned an empty answer.', 'ai_failed');
    const answer = {
      text,
      promptTokens: completion.usage?.prompt_tokens ?? promptTokens,
      completionTokens: completion.usage?.completion_tokens ?? estimateTokens(text),
    };
    await this.record(request, answer);
    return answer;
  }

  private complete(request: ChatRequest): Promise<OpenAI.ChatCompletion> {
    const body = {
      model: this.settings.model,
      messages: request.messages,
      max_tokens: request.maxTokens,
      temperature: 0.2,
      ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
    };
    return this.run((signal, headers) => this.client.chat.completions.create(body, { signal, headers }), request.signal, request.trace);
  }

  /**
   * One turn of a conversation with tools (function calling, `tool_choice` auto or none),
   * streamed or not, through the same limiter, timeout, retries and usage record as `chat`.
   * A streamed answer holds its limiter turn until it ends, and is retried only while nothing of
   * it has reached the caller.
   */
  async chatWithTools(request: ToolChatRequest): Promise<ToolChatAnswer> {
    const promptTokens = estimatePromptTokens(request.messages, request.tools);
    if (promptTokens > this.settings.maxPromptTokens) {
      throw new ServiceError('invalid_request', `the conversation is too long for the model (about ${promptTokens} tokens; at most ${this.settings.maxPromptTokens})`);
    }
    const body = {
      model: this.settings.model,
      messages: request.messages as OpenAI.ChatCompletionMessageParam[],
      max_tokens: request.maxTokens,
      temperature: 0.2,
      ...(request.tools.length
        ? {
            tools: request.tools.map((t) => ({ type: 'function' as const, function: t })),
            tool_choice: request.toolChoice,
          }
        : {}),
    };
    const answer = await this.run(
      (signal, headers) => (request.stream ? this.streamed(body, request.onText, signal, headers) : this.whole(body, signal, headers)),
      request.signal,
      request.trace,
    );
    const result = {
      ...answer,
      promptTokens: answer.promptTokens || promptTokens,
      completionTokens: answer.completionTokens || estimateTokens(answer.text + JSON.stringify(answer.toolCalls)),
    };
    await this.record(request, result);
    return result;
  }

  private async whole(body: OpenAI.ChatCompletionCreateParamsNonStreaming, signal: AbortSignal, headers: TraceHeaders): Promise<ToolChatAnswer> {
    const completion = await this.client.chat.completions.create(body, { signal, headers });
    const choice = completion.choices?.[0];
    if (choice?.finish_reason === 'content_filter') throw new LlmError('The model refused to answer (content filter).', 'ai_failed');
    const message = choice?.message;
    return {
      text: typeof message?.content === 'string' ? message.content : '',
      toolCalls: (message?.tool_calls ?? []).flatMap((call) =>
        call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments ?? '' }] : [],
      ),
      promptTokens: completion.usage?.prompt_tokens ?? 0,
      completionTokens: completion.usage?.completion_tokens ?? 0,
    };
  }

  /** Reads the deltas: text as it comes, tool calls assembled by index from their pieces. */
  private async streamed(
    body: OpenAI.ChatCompletionCreateParamsNonStreaming,
    onText: ((delta: string) => void) | undefined,
    signal: AbortSignal,
    headers: TraceHeaders,
  ): Promise<ToolChatAnswer> {
    const stream = await this.client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { signal, headers },
    );
    let text = '';
    const calls: Array<{ id: string; name: string; arguments: string }> = [];
    let usage: OpenAI.CompletionUsage | undefined;
    try {
      for await (const chunk of stream) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason === 'content_filter') throw new LlmError('The model refused to answer (content filter).', 'ai_failed');
        const delta = choice?.delta;
        if (!delta) continue;
        if (delta.content) {
          text += delta.content;
          onText?.(delta.content);
        }
        for (const piece of delta.tool_calls ?? []) {
          const call = (calls[piece.index] ??= { id: '', name: '', arguments: '' });
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
        }
      }
    } catch (err) {
      if (text && !signal.aborted && !(err instanceof LlmError)) throw new BrokenStream('The model\'s answer broke off.');
      throw err;
    }
    return {
      text,
      toolCalls: calls.filter(Boolean).map((call, i) => ({ ...call, id: call.id || `call_${i}` })),
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
    };
  }

  /**
   * One model call through the outbound client: its limiter, timeout and retries; only LlmErrors
   * out. Each attempt is given the SDK's per-request headers: its child `traceparent`, if any.
   */
  private async run<T>(attempt: (signal: AbortSignal, headers: TraceHeaders) => Promise<T>, signal: AbortSignal, trace: TraceContext | undefined): Promise<T> {
    try {
      return await this.outbound.call(async (attemptSignal, traceparent) => ({ value: await attempt(attemptSignal, traceparent ? { traceparent } : undefined) }), {
        signal,
        trace,
        classify,
        fail: (last) => new LlmError(last.failure, 'ai_unavailable'),
      });
    } catch (err) {
      // No turn within the timeout: the model's limiter is full.
      if (err instanceof ServiceError && !(err instanceof LlmError)) throw new LlmError(`The model is busy: ${err.message}`, 'ai_unavailable');
      throw err;
    }
  }

  /** Tokens per workspace and day: what each workspace's AI use costs the operator. */
  private async record(request: { workspaceId: string; purpose: string }, answer: ChatAnswer): Promise<void> {
    llmTokensUsed(answer.promptTokens, answer.completionTokens);
    const day = new Date().toISOString().slice(0, 10);
    await this.store.collection<UsageDoc>('ai_usage').updateOne(
      { _id: `${request.workspaceId}:${day}` },
      {
        $setOnInsert: { workspaceId: request.workspaceId, day },
        $inc: {
          requests: 1,
          promptTokens: answer.promptTokens,
          completionTokens: answer.completionTokens,
          [`byPurpose.${request.purpose}`]: 1,
        },
      },
      { upsert: true },
    );
  }

  async close(): Promise<void> {
    await closeLimiter(this.limiter);
  }
}

/**
 * What the SDK's errors mean, in the messages callers get: 429, 5xx and a lost connection are
 * worth another attempt; a timeout is not, having already taken LLM_TIMEOUT_MS.
 */
function classify(err: unknown, timeout: AttemptFailure | undefined): AttemptFailure {
  // An answer the model gave but that cannot be used (a content filter) ends the call as it is.
  if (err instanceof LlmError) throw err;
  if (err instanceof BrokenStream) return { failure: err.message, kind: 'final' };
  // The Llm that made the call loaded the SDK to build its client.
  const { default: OpenAI } = openai();
  // The SDK's own timeout (10 minutes) can only come first at LLM_TIMEOUT_MS's ceiling.
  if (timeout || err instanceof OpenAI.APIConnectionTimeoutError) return { failure: 'The model did not answer in time.', kind: 'final' };
  if (err instanceof OpenAI.APIConnectionError) return { failure: 'The model could not be reached.', kind: 'failed' };
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    const wait = retryAfterMs(err.headers);
    if (err.status === 429) return { failure: 'The model is rate limited.', kind: 'rate_limited', retryAfterMs: wait };
    if (err.status >= 500) return { failure: `The model failed (HTTP ${err.status}).`, kind: 'failed', retryAfterMs: wait };
    if (err.status === 401 || err.status === 403) return { failure: 'The model refused the API key (check LLM_API_KEY).', kind: 'final' };
    return { failure: `The model refused the request (HTTP ${err.status}).`, kind: 'final' };
  }
  return { failure: 'The model call failed.', kind: 'final' };
}

/** The model, or the 503 that says how to configure one. */
export function requireLlm(llm: Llm | null): Llm {
  if (!llm) {
    throw new ServiceError('ai_unavailable',
      'No language model is configured: set LLM_BASE_URL (an OpenAI-compatible endpoint), LLM_MODEL, and LLM_API_KEY if it needs one.',
    );
  }
  return llm;
}

export function llmSettings(llm: LlmConfig): LlmSettings | null {
  if (!llm.baseUrl || !llm.model) return null;
  return {
    baseUrl: llm.baseUrl,
    apiKey: llm.apiKey,
    model: llm.model,
    timeoutMs: llm.timeoutMs,
    maxConcurrent: llm.maxConcurrent,
    perMinute: llm.perMinute,
    maxPromptTokens: llm.maxPromptTokens,
    maxRetries: 2,
  };
}
