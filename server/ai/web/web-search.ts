/**
 * The web search port and its adapters, chosen by configuration: SearXNG (self-hosted, its JSON
 * API; `SEARXNG_URL`) or Brave Search (`BRAVE_SEARCH_API_KEY`). Both are the operator's own
 * services, so they are not behind the SSRF guard; the pages they point to are.
 */
import type { Config } from '../../config.ts';
import { VERSION } from '../../version.ts';

export interface WebResult {
  url: string;
  title: string;
  snippet: string;
}

export interface WebSearch {
  name: string;
  search(query: string, count: number, signal: AbortSignal): Promise<WebResult[]>;
}

export class SearchError extends Error {}

const SEARCH_TIMEOUT_MS = 10_000;
const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

async function getJson(url: URL, headers: Record<string, string>, signal: AbortSignal, engine: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { Accept: 'application/json', 'User-Agent': `prospecta/${VERSION}`, ...headers },
      signal: AbortSignal.any([signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]),
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new SearchError(`${engine} could not be reached`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new SearchError(`${engine} answered HTTP ${res.status}`);
  }
  try {
    return await res.json();
  } catch {
    throw new SearchError(`${engine} answered something that is not JSON`);
  }
}

export function searxng(baseUrl: string): WebSearch {
  return {
    name: 'SearXNG',
    async search(query, count, signal) {
      const url = new URL('/search', baseUrl);
      url.search = new URLSearchParams({ q: query, format: 'json', safesearch: '1' }).toString();
      const body = (await getJson(url, {}, signal, 'SearXNG')) as { results?: unknown };
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
    async search(query, count, signal) {
      const url = new URL('/res/v1/web/search', baseUrl);
      url.search = new URLSearchParams({ q: query, count: String(Math.min(count, 20)) }).toString();
      const body = (await getJson(url, { 'X-Subscription-Token': apiKey }, signal, 'Brave Search')) as { web?: { results?: unknown } };
      const results = body.web?.results ?? [];
      if (!Array.isArray(results)) throw new SearchError('Brave Search answered without results');
      return results
        .map((r: Record<string, unknown>) => ({ url: text(r.url), title: text(r.title), snippet: text(r.description) }))
        .filter((r) => r.url)
        .slice(0, count);
    },
  };
}

export function webSearchFrom(config: Config): WebSearch | null {
  const { searxngUrl, braveApiKey, braveUrl } = config.webSearch;
  if (searxngUrl) return searxng(searxngUrl);
  if (braveApiKey) return braveSearch(braveUrl, braveApiKey);
  return null;
}
