/**
 * HTTP to the authorization server: its metadata and its key set. The URLs come from the operator
 * (OAUTH_ISSUER, OAUTH_JWKS_URL) or from the issuer's own metadata, never from a request, so no
 * SSRF guard applies; what is bounded is time and size, because a slow or broken issuer must not
 * hold requests or memory. Redirects are not followed: a key set or metadata document that moved
 * is a configuration to fix, not something to chase.
 */
import { readCapped } from '../outbound/read-capped.ts';

/** Metadata documents and key sets are a few KiB; anything far larger is not one. */
export const MAX_ISSUER_BODY_BYTES = 256 * 1024;

export class IssuerHttpError extends Error {
  override readonly name = 'IssuerHttpError';
}

/**
 * `fetch` whose answer body is read whole, at most `maxBytes`, under `init.signal`; the Response
 * it returns is already in memory. Shaped for jose's `customFetch`, which brings its own timeout.
 */
export function boundedFetch(maxBytes = MAX_ISSUER_BODY_BYTES) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    const res = await fetch(url, { ...init, redirect: 'manual' });
    const body = await readCapped(res, maxBytes);
    if (body === null) throw new IssuerHttpError(`the answer is larger than ${maxBytes} bytes`);
    return new Response(res.status === 204 || res.status === 304 ? null : body, { status: res.status, headers: res.headers });
  };
}

/** GETs a JSON document within `timeoutMs`; the status and the parsed body (undefined unless 200). */
export async function getJson(url: string, timeoutMs: number): Promise<{ status: number; json: unknown }> {
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await boundedFetch()(url, { signal, headers: { accept: 'application/json' } });
  } catch (err) {
    throw new IssuerHttpError(signal.aborted ? `no answer within ${timeoutMs} ms` : problemOf(err));
  }
  if (res.status !== 200) return { status: res.status, json: undefined };
  try {
    return { status: 200, json: await res.json() };
  } catch {
    throw new IssuerHttpError('the answer is not JSON');
  }
}

/** undici's "fetch failed" hides the useful part (ECONNREFUSED, ENOTFOUND…) in its cause. */
export function problemOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? err.message;
}
