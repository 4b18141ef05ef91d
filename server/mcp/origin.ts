/**
 * DNS-rebinding protection for `/mcp`: a browser page on another origin must not reach a server
 * it can resolve (a local one, say) with the user's network position. A request whose `Origin`
 * header is present and is neither PUBLIC_URL's origin nor one of MCP_ALLOWED_ORIGINS is refused
 * with 403 before anything else runs: no credential lookup, no rate-limit count, no body read.
 * Clients that are not browsers send no `Origin` and pass.
 */
import { ServiceError } from '../lib/errors.ts';
import type { Middleware } from '../http/state.ts';
import { MCP_PATH } from './route.ts';

/** The names of this machine itself: a page can only be served from one by someone already on it. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The origins whose pages may call `/mcp`: PUBLIC_URL's, and MCP_ALLOWED_ORIGINS. A loopback
 * PUBLIC_URL is one machine under two names, `localhost` and `127.0.0.1` (on the same scheme and
 * port), and a page of either is the service's own; a name that merely resolves to the loopback
 * address (the rebinding attack itself) is neither.
 */
export function allowedOrigins(publicUrl: string, listed: readonly string[]): Set<string> {
  const url = new URL(publicUrl);
  const own = [url.origin];
  if (LOOPBACK_HOSTS.has(url.hostname)) {
    const port = url.port ? `:${url.port}` : '';
    own.push(`${url.protocol}//localhost${port}`, `${url.protocol}//127.0.0.1${port}`);
  }
  return new Set([...own, ...listed]);
}

export function mcpOrigin(publicUrl: string, listed: readonly string[]): Middleware {
  const allowed = allowedOrigins(publicUrl, listed);
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin && !allowed.has(origin.toLowerCase())) {
      ctx.state.operation = 'mcp';
      throw new ServiceError('forbidden_origin', `Requests from ${origin.slice(0, 200)} may not use ${MCP_PATH}: only pages of this service's own origin (or MCP_ALLOWED_ORIGINS) may.`);
    }
    return next();
  };
}
