/**
 * Research on one row: a question answered by the model from the row, and with `webSearch` from
 * the pages a web search finds (the row's website first), read through the SSRF guard. The model
 * answers in JSON, citing the numbered sources it used; its answer is checked, retried once, and
 * refused (502) when it is still unusable or repeats the system prompt.
 */
import type { InputOf } from '../../shared/operations/index.ts';
import type { ResearchResult } from '../../shared/types.ts';
import { invalidRequest, ServiceError } from '../lib/errors.ts';
import { LlmError, requireLlm, type Llm } from './llm.ts';
import { framing } from './untrusted-data.ts';
import { PageError, readPage, type Page } from './page-reader.ts';
import { BlockedAddressError } from '../outbound/ssrf-guard.ts';
import { SearchError, type WebSearch } from './web-search.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export const MAX_PAGES = 5;
const MAX_ANSWER_CHARS = 4000;
const PAGE_CHARS = 6000;

export type ResearchInput = InputOf<'research'>;

/** The research answer, before the handler says what it charged. */
export type ResearchAnswer = Omit<ResearchResult, 'creditsCharged'>;
/** A page gathered for the answer, and whether it was read. */
export type Source = ResearchAnswer['sources'][number];

export interface ResearchDeps {
  llm: Llm | null;
  search: WebSearch | null;
  allowLoopback: boolean;
}

const homepage = (value: string) => (/^https?:\/\//i.test(value) ? value : `https://${value}`);

/** A scheme other than http(s) (`file:`, `javascript:`, `ftp://`), not a host followed by a port. */
const OTHER_SCHEME = /^(?!https?:)[a-z][a-z0-9+.-]*:(?!\d+(?:[/?#]|$))/i;

/**
 * The row's site must be a web address or a bare domain: `file:///etc/passwd` is refused (400)
 * rather than read as the host `file:` (once it became `https://file:///etc/passwd`).
 */
export function checkSiteFields(input: ResearchInput): void {
  for (const field of ['website', 'companyDomain'] as const) {
    const value = input[field]?.trim();
    if (value && OTHER_SCHEME.test(value)) {
      throw invalidRequest(`${field} must be an http(s) URL or a domain, not a ${value.slice(0, value.indexOf(':') + 1)} URL`);
    }
  }
}

/** The row as the model sees it: the named fields, then the sheet's other cells by label. */
export function rowContext(input: ResearchInput): Record<string, string> {
  const row: Record<string, string> = {};
  for (const field of ['name', 'company', 'companyDomain', 'website', 'linkedinUrl'] as const) {
    if (input[field]?.trim()) row[field] = input[field]!.trim();
  }
  for (const column of input.columns ?? []) if (column.value.trim()) row[column.label || column.id] = column.value;
  return row;
}

/** Pages to read: the row's own site first, then the search results, at most five, no repeats. */
async function gather(input: ResearchInput, deps: ResearchDeps, signal: AbortSignal, trace: TraceContext | undefined): Promise<Array<{ page: Page | null; source: Source; snippet: string }>> {
  if (!deps.search) {
    throw new ServiceError('ai_unavailable', 'Web search is not configured: set SEARXNG_URL, or BRAVE_SEARCH_API_KEY.');
  }
  const subject = input.company ?? input.name ?? input.companyDomain ?? '';
  const query = `${subject} ${input.prompt}`.trim().slice(0, 300);
  let results;
  try {
    results = await deps.search.search(query, 8, signal, trace);
  } catch (err) {
    if (err instanceof SearchError) throw new ServiceError('ai_unavailable', `Web search failed: ${err.message}`);
    throw err;
  }
  const own = input.website ?? input.companyDomain;
  const candidates = [...(own ? [{ url: homepage(own), title: own, snippet: '' }] : []), ...results];
  const seen = new Set<string>();
  const chosen = candidates.filter((c) => {
    const key = c.url.replace(/[#?].*$/, '').replace(/\/+$/, '');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  }).slice(0, MAX_PAGES);

  return Promise.all(
    chosen.map(async (c) => {
      try {
        const page = await readPage(c.url, { allowLoopback: deps.allowLoopback, maxChars: PAGE_CHARS, signal });
        return { page, snippet: c.snippet, source: { url: c.url, title: page.title || c.title, read: true } };
      } catch (err) {
        if (!(err instanceof PageError || err instanceof BlockedAddressError)) throw err;
        return { page: null, snippet: c.snippet, source: { url: c.url, title: c.title || c.url, read: false, error: err.message } };
      }
    }),
  );
}

interface ModelAnswer {
  answer: string;
  citations: number[];
}

function parseAnswer(text: string, sourceCount: number): ModelAnswer | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const { answer, citations } = (parsed ?? {}) as { answer?: unknown; citations?: unknown };
  if (typeof answer !== 'string' || !answer.trim() || answer.length > MAX_ANSWER_CHARS) return null;
  const cited = Array.isArray(citations) ? citations : [];
  if (!cited.every((n) => Number.isInteger(n) && n >= 1 && n <= sourceCount)) return null;
  return { answer: answer.trim(), citations: [...new Set(cited as number[])] };
}

export async function research(input: ResearchInput, deps: ResearchDeps, workspaceId: string, signal: AbortSignal, trace?: TraceContext): Promise<ResearchAnswer> {
  const llm = requireLlm(deps.llm);
  const webSearch = input.webSearch === true;
  const gathered = webSearch ? await gather(input, deps, signal, trace) : [];
  const usable = gathered.filter((g) => g.page || g.snippet);

  const frame = framing();
  const sourcesForModel = usable.map((g, i) => ({
    number: i + 1,
    url: g.source.url,
    title: g.source.title,
    ...(g.page ? { text: g.page.text } : { snippet: g.snippet }),
  }));
  const messages = [
    {
      role: 'system' as const,
      content:
        'You are a B2B research assistant. Answer the question about the record in a few sentences, in the language of the question. ' +
        (webSearch
          ? 'Use the numbered sources and the record; say so when they do not answer the question. '
          : 'Use only the record; say so when it does not answer the question. Do not invent facts. ') +
        'Reply with a JSON object {"answer": "...", "citations": [numbers of the sources you used]}. ' +
        frame.rules,
    },
    {
      role: 'user' as const,
      content:
        `Question: ${input.prompt.trim()}\n\nRecord:\n${frame.wrap('record', rowContext(input))}` +
        (webSearch ? `\n\nSources:\n${frame.wrap('sources', sourcesForModel)}` : ''),
    },
  ];

  for (let attempt = 0; attempt < 2; attempt++) {
    const reply = await llm.chat({ messages, maxTokens: 800, json: true, workspaceId, purpose: webSearch ? 'research_web' : 'research', signal, trace });
    if (frame.leaks(reply.text)) continue;
    const parsed = parseAnswer(reply.text, sourcesForModel.length);
    if (!parsed) continue;
    return {
      answer: parsed.answer,
      citations: parsed.citations.map((n) => ({ url: sourcesForModel[n - 1]!.url, title: sourcesForModel[n - 1]!.title })),
      webSearch,
      sources: gathered.map((g) => g.source),
    };
  }
  throw new LlmError('The model did not give a usable answer.', 'ai_failed');
}
