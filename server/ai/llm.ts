/**
 * The one client for language models: the official `openai` SDK pointed at any OpenAI-compatible
 * endpoint (`LLM_BASE_URL`: OpenAI, Azure OpenAI, OpenRouter, Ollama, vLLM, LM Studio…). Every
 * call waits for the model's Bottleneck limiter; 429 and 5xx are retried through the limiter
 * again, honouring `Retry-After`, a bounded number of times; prompts and answers have token caps;
 * tokens are counted per workspace. Callers get text or an {@link LlmError}, never an SDK error.
 */
import type Bottleneck from 'bottleneck';
import OpenAI from 'openai';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config.ts';
import { ServiceError } from '../errors.ts';
import { closeLimiter, createLimiter, runLimited, throttleFor } from '../outbound/limiter.ts';
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

  constructor(
    readonly settings: LlmSettings,
    private readonly store: Store,
    redisUrl?: string,
  ) {
    this.client = new OpenAI({
      baseURL: settings.baseUrl,
      // Local servers (Ollama, vLLM) take no key, but the SDK insists on one.
      apiKey: settings.apiKey ?? 'none',
      timeout: settings.timeoutMs,
      // Retries go through the limiter below, so they count against the model's rate too.
      maxRetries: 0,
    });
    this.limiter = createLimiter(
      `llm:${settings.model}`,
      throttleFor({ maxConcurrent: settings.maxConcurrent, perMinute: settings.perMinute }),
      redisUrl ? { url: redisUrl } : undefined,
    );
  }

  async chat(request: ChatRequest): Promise<ChatAnswer> {
    const promptTokens = request.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    if (promptTokens > this.settings.maxPromptTokens) {
      throw new ServiceError('invalid_request', `the context is too long for the model (about ${promptTokens} tokens; at most ${this.settings.maxPromptTokens})`);
    }
    for (let retry = 0; ; retry++) {
      try {
        const completion = await runLimited(
          this.limiter,
          () =>
            this.client.chat.completions.create(
              {
                model: this.settings.model,
                messages: request.messages,
                max_tokens: request.maxTokens,
                temperature: 0.2,
                ...(request.json ? { response_format: { type: 'json_object' as const } } : {}),
              },
              { signal: request.signal },
            ),
          { name: 'The model', signal: request.signal, maxWaitMs: this.settings.timeoutMs },
        );
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
      } catch (err) {
        if (err instanceof LlmError) throw err;
        if (err instanceof ServiceError) throw new LlmError(`The model is busy: ${err.message}`, 'ai_unavailable');
        if (request.signal.aborted) throw err;
        const { message, wait, retryable } = describe(err);
        if (!retryable || retry >= this.settings.maxRetries) throw new LlmError(message, 'ai_unavailable');
        const delay = wait ?? 500 * 2 ** retry;
        if (delay > this.settings.timeoutMs) throw new LlmError(message, 'ai_unavailable');
        await sleep(delay, undefined, { signal: request.signal });
      }
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

function describe(err: unknown): { message: string; wait: number | null; retryable: boolean } {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { message: 'The model did not answer in time.', wait: null, retryable: false };
  if (err instanceof OpenAI.APIConnectionError) return { message: 'The model could not be reached.', wait: null, retryable: true };
  if (err instanceof OpenAI.APIError && err.status !== undefined) {
    const wait = retryAfterMs(err.headers);
    if (err.status === 429) return { message: 'The model is rate limited.', wait, retryable: true };
    if (err.status >= 500) return { message: `The model failed (HTTP ${err.status}).`, wait, retryable: true };
    if (err.status === 401 || err.status === 403) return { message: 'The model refused the API key (check LLM_API_KEY).', wait: null, retryable: false };
    return { message: `The model refused the request (HTTP ${err.status}).`, wait: null, retryable: false };
  }
  return { message: 'The model call failed.', wait: null, retryable: false };
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
