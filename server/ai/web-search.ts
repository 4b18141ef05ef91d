/**
 * The web search port and its adapters, chosen by configuration: SearXNG (self-hosted, its JSON
 * API; `SEARXNG_URL`) or Brave Search (`BRAVE_SEARCH_API_KEY`). Both are the operator's own
 * services, so they are not behind the SSRF guard; the pages they point to are. A search carries
 * the request's trace (a child `traceparent`); a page read (page-reader.ts) does not, being
 * anyone's server.
 */
import type { WebSearchConfig } from '../config.ts';
import { serviceMeter } from '../lib/metrics.ts';
import { childTraceparent, type TraceContext } from '../lib/trace-context.ts';
import { VERSION } from '../lib/version.ts';

export interface WebResult {
  url: string;
  title: string;
  snippet: string;
}

export interface WebSearch {
  name: string;
  /** `trace`: the request's, sent on as a child `traceparent`. */
  search(query: string, count: number, signal: AbortSignal, trace?: TraceContext): Promise<WebResult[]>;
}

export class SearchError extends Error {}

const SEARCH_TIMEOUT_MS = 10_000;
const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

/** The engine's id in the metrics (`searxng`, `brave`) and its name in messages. */
interface Engine {
  id: string;
  name: string;
}

async function getJson(url: URL, headers: Record<string, string>, signal: AbortSignal, engine: Engine, trace: TraceContext | undefined): Promise<unknown> {
  const meter = serviceMeter(engine.id);
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const timeout = AbortSignal.timeout(SEARCH_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Accept: 'application/json', 'User-Agent': `prospecta/${VERSION}`, ...(trace ? { traceparent: childTraceparent(trace) } : {}), ...headers },
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch (err) {
    meter.attempt(signal.aborted ? 'aborted' : timeout.aborted ? 'timeout' : 'failed', seconds());
    if (signal.aborted) throw err;
    throw new SearchError(`${engine.name} could not be reached`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    meter.attempt(res.status === 429 ? 'rate_limited' : res.status >= 500 ? 'failed' : 'rejected', seconds());
    throw new SearchError(`${engine.name} answered HTTP ${res.status}`);
  }
  try {
    const body: unknown = await res.json();
    meter.attempt('ok', seconds());
    return body;
  } catch {
    meter.attempt(signal.aborted ? 'aborted' : 'failed', seconds());
    throw new SearchError(`${engine.name} answered something that is not JSON`);
  }
}

const SEARXNG: Engine = { id: 'searxng', name: 'SearXNG' };
const BRAVE: Engine = { id: 'brave', name: 'Brave Search' };

export function searxng(baseUrl: string): WebSearch {
  return {
    name: 'SearXNG',
    async search(query, count, signal, trace) {
      const url = new URL('/search', baseUrl);
      url.search = new URLSearchParams({ q: query, format: 'json', safesearch: '1' }).toString();
      const body = (await getJson(url, {}, signal, SEARXNG, trace)) as { results?: unknown };
      if (!Array.isArray(body.results)) throw new SearchError('SearXNG answered without results');
      return body.results
        .map((r: Record<string, unknown>) => ({ url: text(r.url), title: text(r.title), snippet: text(r.content) }))
        .filter((r) => r.url)
        .slice(0, count);
    },
  };
}

export function braveSearch(baseUrl: string, apiKey: string): WebSearch {
  return {
    name: 'Brave Search',
    async search(query, count, signal, trace) {
      const url = new URL('/res/v1/web/search', baseUrl);
      url.search = new URLSearchParams({ q: query, count: String(Math.min(count, 20)) }).toString();
      const body = (await getJson(url, { 'X-Subscription-Token': apiKey }, signal, BRAVE, trace)) as { web?: { results?: unknown } };
      const results = body.web?.results ?? [];
      if (!Array.isArray(results)) throw new SearchError('Brave Search answered without results');
      return results
        .map((r: Record<string, unknown>) => ({ url: text(r.url), title: text(r.title), snippet: text(r.description) }))
        .filter((r) => r.url)
        .slice(0, count);
    },
  };
}

export function webSearchFrom({ searxngUrl, braveApiKey, braveUrl }: WebSearchConfig): WebSearch | null {
  if (searxngUrl) return searxng(searxngUrl);
  if (braveApiKey) return braveSearch(braveUrl, braveApiKey);
  return null;
}
