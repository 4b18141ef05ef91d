/**
 * The one client for language models: the official `openai` SDK pointed at any OpenAI-compatible
 * endpoint (`LLM_BASE_URL`: OpenAI, Azure OpenAI, OpenRouter, Ollama, vLLM, LM Studio…). Calls
 * go through the model's {@link OutboundClient}: its Bottleneck limiter, a timeout, and 429 and 5xx
 * retried through the limiter again, honouring `Retry-After`, a bounded number of times. Prompts
 * and answers have token caps; tokens are counted per workspace. Callers get text or an
 * {@link LlmError}, never an SDK error.
 */
import type Bottleneck from 'bottleneck';
import OpenAI from 'openai';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { OutboundClient } from '../outbound/client.ts';
import { closeLimiter, createLimiter, throttleFor } from '../outbound/limiter.ts';
import type { AttemptFailure } from '../outbound/retry.ts';
import { retryAfterMs } from '../outbound/retry-after.ts';
import type { IndexDeclaration, Store } from '../store/port.ts';

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
}

export interface ChatAnswer {
  text: string;
  promptTokens: number;
  completionTokens: number;
}

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
  ) {
    this.client = new OpenAI({
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

  private async complete(request: ChatRequest): Promise<OpenAI.ChatCompletion> {
    const body = {
      model: this.settings.model,
      messages: request.messages,
      max_tokens: request.maxTokens,
      temperature: 0.2,
      ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
    };
    try {
      return await this.outbound.call(async (signal) => ({ value: await this.client.chat.completions.create(body, { signal }) }), {
        signal: request.signal,
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
  private async record(request: ChatRequest, answer: ChatAnswer): Promise<void> {
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

export function llmSettings(config: Config): LlmSettings | null {
  const { llm } = config;
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
