/**
 * Reading a web page for the model: fetched through the SSRF guard with strict limits (time,
 * 2 MiB, HTML only, a few redirects, each checked again), then reduced to its readable text with
 * Mozilla's Readability over linkedom's DOM.
 */
import type { Readability } from '@mozilla/readability';
import http from 'node:http';
import https from 'node:https';
import type { parseHTML } from 'linkedom';
import { loadWhenUsed } from '../lib/load-when-used.ts';
import { VERSION } from '../lib/version.ts';
import { BlockedAddressError, checkUrl, guardedLookup, type GuardOptions } from '../outbound/ssrf-guard.ts';

/** Only research reads pages. */
const linkedom = loadWhenUsed<{ parseHTML: typeof parseHTML }>('linkedom');
const readability = loadWhenUsed<{ Readability: typeof Readability }>('@mozilla/readability');

export const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const MAX_REDIRECTS = 3;

export class PageError extends Error {}

export interface Page {
  url: string;
  title: string;
  text: string;
}

export interface ReadOptions extends GuardOptions {
  timeoutMs?: number;
  /** Characters of text kept. */
  maxChars?: number;
  signal?: AbortSignal;
}

function get(url: URL, options: ReadOptions, signal: AbortSignal): Promise<{ status: number; location?: string; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'GET',
        lookup: guardedLookup(options),
        headers: { 'User-Agent': `prospecta/${VERSION} (research)`, Accept: 'text/html,application/xhtml+xml' },
        signal,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '');
        if (status >= 300 && status < 400) {
          res.resume();
          return resolve({ status, location: res.headers.location, type, body: Buffer.alloc(0) });
        }
        if (status !== 200) {
          res.resume();
          return reject(new PageError(`HTTP ${status}`));
        }
        if (!/^\s*(text\/html|application\/xhtml\+xml)/i.test(type)) {
          res.destroy();
          return reject(new PageError(`not an HTML page (${type.split(';')[0] || 'no content type'})`));
        }
        if (Number(res.headers['content-length'] ?? 0) > MAX_PAGE_BYTES) {
          res.destroy();
          return reject(new PageError('the page is over 2 MiB'));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_PAGE_BYTES) {
            res.destroy();
            reject(new PageError('the page is over 2 MiB'));
          } else chunks.push(chunk);
        });
        res.on('end', () => resolve({ status, type, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function decode(body: Buffer, type: string): string {
  const charset = /charset=([\w-]+)/i.exec(type)?.[1]?.toLowerCase() ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The readable text of an HTML document. */
export function readableText(html: string, url: string, maxChars = 8000): Page {
  const { document } = linkedom().parseHTML(html);
  const article = new (readability().Readability)(document).parse();
  const fallback = document.body?.textContent ?? '';
  const text = (article?.textContent ?? fallback).replace(/\s+/g, ' ').trim();
  const title = (article?.title || document.title || url).replace(/\s+/g, ' ').trim();
  return { url, title, text: text.length > maxChars ? `${text.slice(0, maxChars)}…` : text };
}

export async function readPage(raw: string, options: ReadOptions): Promise<Page> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 8000);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  let url = checkUrl(raw, options);
  try {
    for (let hop = 0; ; hop++) {
      const res = await get(url, options, signal);
      if (res.location === undefined) return readableText(decode(res.body, res.type), url.toString(), options.maxChars);
      if (hop === MAX_REDIRECTS) throw new PageError('too many redirects');
      url = checkUrl(new URL(res.location, url).toString(), options);
    }
  } catch (err) {
    if (err instanceof PageError || err instanceof BlockedAddressError) throw err;
    if (timeout.aborted) throw new PageError('no answer in time');
    if (options.signal?.aborted) throw err;
    throw new PageError(`could not be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}
