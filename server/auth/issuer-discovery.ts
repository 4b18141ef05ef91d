/**
 * Where the issuer's signing keys are: OAUTH_JWKS_URL when the operator set it, else the
 * `jwks_uri` of the issuer's metadata, read on the first token (not at start-up, so a server
 * whose issuer is down still starts and serves API keys). Metadata is looked for at
 * `{issuer}/.well-known/oauth-authorization-server` (RFC 8414), then
 * `{issuer}/.well-known/openid-configuration` (OpenID Discovery), as decisions.md says, and, for
 * an issuer with a path, at RFC 8414's own form (the well-known segment before the path). A
 * document is used only if its `issuer` is exactly OAUTH_ISSUER (RFC 8414 §3.3), so a document
 * served for another issuer cannot point us at its keys.
 *
 * A found URL is kept for the life of the process. A failure is retried after a backoff, not
 * on every request; meanwhile tokens are refused at once.
 */
import type { Logger } from 'pino';
import { Backoff } from '../lib/backoff.ts';
import { getJson, IssuerHttpError } from './issuer-http.ts';

export class IssuerUnavailable extends Error {
  override readonly name = 'IssuerUnavailable';
}

export function metadataUrls(issuer: string): string[] {
  const base = issuer.replace(/\/+$/, '');
  const urls = [`${base}/.well-known/oauth-authorization-server`, `${base}/.well-known/openid-configuration`];
  const { origin, pathname } = new URL(base);
  if (pathname !== '/' && pathname !== '') urls.push(`${origin}/.well-known/oauth-authorization-server${pathname}`);
  return urls;
}

export class IssuerDiscovery {
  private found: URL | null;
  private pending: Promise<URL> | null = null;
  private readonly backoff = new Backoff();

  constructor(
    private readonly issuer: string,
    jwksUrl: string | undefined,
    private readonly timeoutMs: number,
    private readonly log: Logger,
  ) {
    this.found = jwksUrl ? new URL(jwksUrl) : null;
  }

  /** The key set's URL; throws IssuerUnavailable while the metadata cannot be had. */
  jwksUri(): Promise<URL> {
    if (this.found) return Promise.resolve(this.found);
    // One discovery at a time: the requests that arrive meanwhile wait for the same answer.
    if (this.pending) return this.pending;
    if (this.backoff.waiting) return Promise.reject(new IssuerUnavailable('the issuer metadata could not be read; retrying later'));
    this.pending = this.discover().finally(() => (this.pending = null));
    return this.pending;
  }

  private async discover(): Promise<URL> {
    const problems: string[] = [];
    for (const url of metadataUrls(this.issuer)) {
      let answer: { status: number; json: unknown };
      try {
        answer = await getJson(url, this.timeoutMs);
      } catch (err) {
        // Unreachable or too slow: the next well-known address is on the same server.
        problems.push(`${url}: ${err instanceof IssuerHttpError ? err.message : String(err)}`);
        break;
      }
      if (answer.status !== 200) {
        problems.push(`${url}: HTTP ${answer.status}`);
        continue;
      }
      const checked = this.check(answer.json);
      if (typeof checked === 'string') {
        problems.push(`${url}: ${checked}`);
        continue;
      }
      this.found = checked;
      this.backoff.succeeded();
      this.log.info({ issuer: this.issuer, metadata: url, jwksUri: checked.href }, 'oauth issuer discovered');
      return checked;
    }
    this.backoff.failed();
    this.log.warn({ issuer: this.issuer, problems }, 'oauth issuer metadata unavailable');
    throw new IssuerUnavailable('the issuer metadata could not be read');
  }

  /** The metadata's jwks_uri, or what is wrong with the document. */
  private check(doc: unknown): URL | string {
    if (typeof doc !== 'object' || doc === null) return 'not a JSON object';
    const { issuer, jwks_uri: jwksUri } = doc as { issuer?: unknown; jwks_uri?: unknown };
    if (issuer !== this.issuer) return `its issuer is ${JSON.stringify(issuer)}, not OAUTH_ISSUER`;
    if (typeof jwksUri !== 'string') return 'no jwks_uri (set OAUTH_JWKS_URL)';
    try {
      const url = new URL(jwksUri);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'jwks_uri is not an http(s) URL';
      return url;
    } catch {
      return 'jwks_uri is not a URL';
    }
  }
}
