/**
 * A provider's HTTP client: every attempt, retries included, waits for the provider's Bottleneck
 * limiter; a 429 pauses the whole provider until its `Retry-After` has passed and is retried
 * within a bounded wait; timeouts, 5xx and network errors feed the circuit breaker. Adapters get
 * parsed JSON or a {@link ProviderFailure}, never a raw fetch error.
 */
import type Bottleneck from 'bottleneck';
import { setTimeout as sleep } from 'node:timers/promises';
import { duration } from '../outbound/duration.ts';
import { runLimited } from '../outbound/limiter.ts';
import { CircuitBreaker } from '../outbound/circuit-breaker.ts';
import { ProviderFailure } from './provider.ts';
import { ServiceError } from '../errors.ts';
import { VERSION } from '../version.ts';

const USER_AGENT = `prospecta/${VERSION}`;
/** Bodies above this are refused as garbage rather than buffered. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpRequest {
  method?: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON; null for an empty body. */
  body: unknown;
}

export interface ProviderHttpOptions {
  provider: string;
  baseUrl: string;
  /** The key this client sends (null for keyless providers). */
  key: string | null;
  limiter: Bottleneck;
  breaker?: CircuitBreaker;
  fetch?: typeof fetch;
  /** @default 10_000 */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx, a timeout or a network error. @default 2 */
  maxRetries?: number;
  /** A longer `Retry-After` than this is not waited for: the call fails at once. @default 10_000 */
  maxRetryAfterMs?: number;
  /** First backoff without `Retry-After`; doubles with each retry, with jitter. @default 250 */
  backoffMs?: number;
  /** How long one attempt may wait for its turn. @default 30_000 */
  maxQueueWaitMs?: number;
}

/** Milliseconds from a `Retry-After` header (seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

type Attempt = { answer: HttpAnswer } | { failure: string; retryAfterMs: number | null; breaks: boolean };

export class ProviderHttp {
  readonly key: string | null;
  private readonly options: Required<Omit<ProviderHttpOptions, 'key' | 'breaker'>>;
  private readonly breaker: CircuitBreaker;
  /** Until when the provider asked us to stop (its last `Retry-After`). */
  private pausedUntil = 0;

  constructor(options: ProviderHttpOptions) {
    this.key = options.key;
    this.breaker = options.breaker ?? new CircuitBreaker();
    this.options = {
      fetch: globalThis.fetch,
      timeoutMs: 10_000,
      maxRetries: 2,
      maxRetryAfterMs: 10_000,
      backoffMs: 250,
      maxQueueWaitMs: 30_000,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
    };
  }

  /**
   * Sends the request and answers any status the adapter should read (2xx, and 4xx other than
   * 429, 401 and 403); throws a {@link ProviderFailure} otherwise.
   */
  async send(request: HttpRequest, signal: AbortSignal): Promise<HttpAnswer> {
    const { provider, maxRetries, maxRetryAfterMs } = this.options;
    if (!this.breaker.allow()) {
      throw new ProviderFailure(`${provider} is failing; skipped for ${duration(this.breaker.retryInMs())}`, true);
    }
    for (let retry = 0; ; retry++) {
      let attempt: Attempt;
      try {
        attempt = await runLimited(this.options.limiter, () => this.attempt(request, signal), {
          name: provider,
          signal,
          maxWaitMs: this.options.maxQueueWaitMs,
        });
      } catch (err) {
        if (err instanceof ServiceError) throw new ProviderFailure(err.message, true);
        throw err;
      }
      if ('answer' in attempt) {
        this.breaker.success();
        return attempt.answer;
      }
      if (attempt.breaks) this.breaker.failure();
      const wait = attempt.retryAfterMs ?? this.backoff(retry);
      if (retry >= maxRetries || wait > maxRetryAfterMs || !this.breaker.allow()) {
        throw new ProviderFailure(`${provider}: ${attempt.failure}`);
      }
      await sleep(wait, undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  }

  private backoff(retry: number): number {
    const ceiling = Math.min(this.options.backoffMs * 2 ** retry, this.options.maxRetryAfterMs);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private url(request: HttpRequest): string {
    const url = new URL(this.options.baseUrl + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return url.toString();
  }

  private async attempt(request: HttpRequest, signal: AbortSignal): Promise<Attempt> {
    // A 429 seen by any call holds every call of this provider that got its turn meanwhile.
    const paused = this.pausedUntil - Date.now();
    if (paused > 0) await sleep(paused, undefined, { signal });

    const { timeoutMs, provider } = this.options;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await this.options.fetch(this.url(request), {
        method: request.method ?? 'GET',
        headers: {
          'User-Agent': USER_AGENT,
          Accept: 'application/json',
          ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...request.headers,
        },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: AbortSignal.any([signal, timeout]),
      });
      if (res.status === 429) {
        await res.body?.cancel();
        const wait = retryAfterMs(res.headers.get('retry-after'));
        if (wait !== null) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + wait);
        return { failure: 'rate limited (HTTP 429)', retryAfterMs: wait, breaks: false };
      }
      if (res.status >= 500) {
        await res.body?.cancel();
        return { failure: `HTTP ${res.status}`, retryAfterMs: retryAfterMs(res.headers.get('retry-after')), breaks: true };
      }
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel();
        throw new ProviderFailure(`${provider} refused the key (HTTP ${res.status})`);
      }
      const text = await readCapped(res);
      if (text === null) return { failure: 'answer too large', retryAfterMs: null, breaks: true };
      let body: unknown = null;
      if (text.trim() !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          // A 404 page in HTML still means "no match"; anything else unreadable is a failure.
          if (res.status !== 404) return { failure: 'unreadable answer', retryAfterMs: null, breaks: true };
        }
      }
      return { answer: { status: res.status, headers: res.headers, body } };
    } catch (err) {
      if (err instanceof ProviderFailure) throw err;
      if (signal.aborted) throw signal.reason;
      if (timeout.aborted) return { failure: `no answer within ${duration(timeoutMs)}`, retryAfterMs: null, breaks: true };
      return { failure: 'connection failed', retryAfterMs: null, breaks: true };
    }
  }
}

async function readCapped(res: Response): Promise<string | null> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    await res.body?.cancel();
    return null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
