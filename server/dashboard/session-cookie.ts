/**
 * The dashboard's cookies: `HttpOnly` (no script reads them), `SameSite=Lax` (another site's
 * form posts and fetches go without them; following a link still signs in), `Secure` when the
 * public address is https, and scoped to /dashboard.
 */
import type { AppContext } from '../http/state.ts';

export const SESSION_COOKIE = 'prospecta_session';
/** Binds an OIDC sign-in's state to the browser that started it. */
export const SIGN_IN_COOKIE = 'prospecta_sign_in';

export interface CookiePolicy {
  /** `PUBLIC_URL` is https: send the cookies over TLS only. */
  secure: boolean;
}

export function cookiePolicy(publicUrl: string): CookiePolicy {
  return { secure: publicUrl.startsWith('https:') };
}

export function readCookie(ctx: AppContext, name: string): string | undefined {
  return ctx.cookies.get(name) ?? undefined;
}

export function writeCookie(ctx: AppContext, policy: CookiePolicy, name: string, value: string, maxAgeMs: number): void {
  // Behind a TLS-terminating proxy the request itself may look like plain http; PUBLIC_URL decides.
  ctx.cookies.secure = policy.secure;
  ctx.cookies.set(name, value, { httpOnly: true, sameSite: 'lax', secure: policy.secure, path: '/dashboard', maxAge: maxAgeMs, overwrite: true });
}

export function clearCookie(ctx: AppContext, policy: CookiePolicy, name: string): void {
  ctx.cookies.secure = policy.secure;
  ctx.cookies.set(name, '', { httpOnly: true, sameSite: 'lax', secure: policy.secure, path: '/dashboard', maxAge: 0, overwrite: true });
}
