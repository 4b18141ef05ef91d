/**
 * Headers of every page the dashboard and /docs serve. The CSP allows scripts, styles and
 * requests from this origin only and no inline script or style attribute, so an injected string
 * cannot run; pages cannot be framed; links to elsewhere carry no referrer (a sign-in link's
 * token must never leave in a `Referer`).
 */
import type { AppContext } from '../http/state.ts';

export interface CspOptions {
  /** Extra `style-src` sources (the API reference's viewer sets a few styles inline). */
  styleSrc?: string[];
}

export function contentSecurityPolicy({ styleSrc = [] }: CspOptions = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    ["style-src 'self'", ...styleSrc].join(' '),
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function setPageHeaders(ctx: AppContext, csp = contentSecurityPolicy()): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('X-Frame-Options', 'DENY');
  // Pages hold a workspace's data: never kept by shared caches, always revalidated.
  ctx.set('Cache-Control', 'no-store');
}
