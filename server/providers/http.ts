/**
 * A provider's HTTP client: its calls go through the provider's {@link OutboundClient} (limiter,
 * the pause a 429 asks for, timeout, bounded retries, circuit breaker). What is the provider's
 * own stays here: the request it sends with its key, which answers the adapter should read, and
 * which are failures. Adapters get parsed JSON or a {@link ProviderFailure}, never a raw fetch
 * error.
 */
import { CircuitBreaker } from '../outbound/circuit-breaker.ts';
import { OutboundClient, type OutboundClientOptions } from '../outbound/client.ts';
import type { Attempt, AttemptFailure } from '../outbound/retry.ts';
import { readCapped } from '../outbound/read-capped.ts';
import { retryAfterMs } from '../outbound/retry-after.ts';
import { ProviderFailure } from './provider-failure.ts';
import { ServiceError } from '../lib/errors.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import { VERSION } from '../lib/version.ts';

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

export interface ProviderHttpOptions extends Omit<OutboundClientOptions, 'name' | 'breaker'> {
  provider: string;
  baseUrl: string;
  /** The key this client sends (null for keyless providers). */
  key: string | null;
  /** @default a new CircuitBreaker() */
  breaker?: CircuitBreaker;
  fetch?: typeof fetch;
}

/** A provider is called anew after a timeout or a lost connection; what else it throws is ours. */
function classify(err: unknown, timeout: AttemptFailure | undefined): AttemptFailure {
  if (err instanceof ProviderFailure) throw err;
  return timeout ?? { failure: 'connection failed', kind: 'failed' };
}

export class ProviderHttp {
  readonly key: string | null;
  private readonly provider: string;
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;
  private readonly outbound: OutboundClient;

  constructor({ provider, baseUrl, key, fetch, breaker, ...outbound }: ProviderHttpOptions) {
    this.key = key;
    this.provider = provider;
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.fetch = fetch ?? globalThis.fetch;
    this.outbound = new OutboundClient({ ...outbound, name: provider, breaker: breaker ?? new CircuitBreaker() });
  }

  /** Until when a 429's `Retry-After` holds every call made with this key; null when it does not. */
  pausedUntil(): Date | null {
    return this.outbound.pausedUntil();
  }

  /**
   * Sends the request and answers any status the adapter should read (2xx, and 4xx other than
   * 429, 401 and 403); throws a {@link ProviderFailure} otherwise.
   */
  async send(request: HttpRequest, signal: AbortSignal, trace?: TraceContext): Promise<HttpAnswer> {
    try {
      return await this.outbound.call((attemptSignal, traceparent) => this.attempt(request, attemptSignal, traceparent), {
        signal,
        trace,
        classify,
        fail: (last) => new ProviderFailure(`${this.provider}: ${last.failure}`),
      });
    } catch (err) {
      // The provider was not called at all: no turn in time, or its circuit breaker is open.
      if (err instanceof ServiceError) throw new ProviderFailure(err.message, true);
      throw err;
    }
  }

  private url(request: HttpRequest): string {
    const url = new URL(this.baseUrl + request.path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return url.toString();
  }

  private async attempt(request: HttpRequest, signal: AbortSignal, traceparent: string | undefined): Promise<Attempt<HttpAnswer>> {
    const res = await this.fetch(this.url(request), {
      method: request.method ?? 'GET',
      headers: {
        'User-Agent': USER_AGENT,
        Accept: 'application/json',
        ...(traceparent ? { traceparent } : {}),
        ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...request.headers,
      },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal,
    });
    if (res.status === 429) {
      await res.body?.cancel();
      return { failure: 'rate limited (HTTP 429)', kind: 'rate_limited', retryAfterMs: retryAfterMs(res.headers) };
    }
    if (res.status >= 500) {
      await res.body?.cancel();
      return { failure: `HTTP ${res.status}`, kind: 'failed', retryAfterMs: retryAfterMs(res.headers) };
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new ProviderFailure(`${this.provider} refused the key (HTTP ${res.status})`);
    }
    const bytes = await readCapped(res, MAX_BODY_BYTES);
    if (bytes === null) return { failure: 'answer too large', kind: 'failed' };
    const text = bytes.toString('utf8');
    let body: unknown = null;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        // A 404 page in HTML still means "no match"; anything else unreadable is a failure.
        if (res.status !== 404) return { failure: 'unreadable answer', kind: 'failed' };
      }
    }
    return { value: { status: res.status, headers: res.headers, body } };
  }
}
