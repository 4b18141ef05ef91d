/**
 * Cross-site request forgery defence for the dashboard's state changes, on top of SameSite=Lax
 * cookies: a POST, PATCH or DELETE must say it comes from the dashboard's own origin. Browsers
 * send `Origin` on every such request; it must name PUBLIC_URL's origin or the one the request
 * was addressed to (its Host, which another site cannot set). Without `Origin`, only
 * `Sec-Fetch-Site: same-origin` will do, and the same for `Origin: null`, which is what a
 * browser sends for a form posted from a page whose referrer policy is `no-referrer` (the
 * dashboard's). A request that says neither is refused: a real dashboard page always says one.
 */
import type { AppContext } from '../http/state.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function changesState(ctx: AppContext): boolean {
  return !SAFE_METHODS.has(ctx.method);
}

export function isSameOrigin(ctx: AppContext, publicOrigin: string): boolean {
  const origin = ctx.get('Origin');
  if (origin && origin !== 'null') return origin === publicOrigin || origin === `${ctx.protocol}://${ctx.host}`;
  return ctx.get('Sec-Fetch-Site') === 'same-origin';
}
