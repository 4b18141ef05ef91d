/**
 * DNS-rebinding protection for `/mcp`: a browser page on another origin must not reach a server
 * it can resolve (a local one, say) with the user's network position. A request whose `Origin`
 * header is present and is neither PUBLIC_URL's origin nor one of MCP_ALLOWED_ORIGINS is refused
 * with 403 before anything else runs: no credential lookup, no rate-limit count, no body read.
 * Clients that are not browsers send no `Origin` and pass.
 */
import { ServiceError } from '../errors.ts';
import { requestPath, type Middleware } from '../http/state.ts';
import { MCP_PATH } from './route.ts';

const MCP_PATHS = new Set([MCP_PATH, `/v1${MCP_PATH}`]);

export function mcpOrigin(publicUrl: string, allowedOrigins: readonly string[]): Middleware {
  const allowed = new Set([new URL(publicUrl).origin, ...allowedOrigins]);
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin && MCP_PATHS.has(requestPath(ctx)) && !allowed.has(origin.toLowerCase())) {
      ctx.state.operation = 'mcp';
      throw new ServiceError('forbidden_origin', `Requests from ${origin.slice(0, 200)} may not use ${MCP_PATH}: only pages of this service's own origin (or MCP_ALLOWED_ORIGINS) may.`);
    }
    return next();
  };
}
