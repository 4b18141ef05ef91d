/**
 * A tiny History-API router: the current path is a signal; links inside the dashboard change it
 * without a page load, other links (sign-out, /docs) load as usual.
 */
import { signal } from '@preact/signals';

export const ROOT = '/dashboard';

export type Route =
  | { page: 'overview' }
  | { page: 'keys' }
  | { page: 'credits' }
  | { page: 'campaigns' }
  | { page: 'campaign'; campaignId: string }
  | { page: 'jobs' }
  | { page: 'watches' }
  | { page: 'agent' }
  | { page: 'not-found' };

/** The path without a trailing slash (`/dashboard/keys/` is `/dashboard/keys`). */
const normalize = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

export const currentPath = signal(normalize(location.pathname));

export function routeOf(path: string): Route {
  const rest = normalize(path).slice(ROOT.length);
  switch (rest) {
    case '':
      return { page: 'overview' };
    case '/keys':
      return { page: 'keys' };
    case '/credits':
      return { page: 'credits' };
    case '/campaigns':
      return { page: 'campaigns' };
    case '/jobs':
      return { page: 'jobs' };
    case '/watches':
      return { page: 'watches' };
    case '/agent':
      return { page: 'agent' };
  }
  const campaign = /^\/campaigns\/([^/]+)$/.exec(rest);
  if (campaign) return { page: 'campaign', campaignId: decodeURIComponent(campaign[1]!) };
  return { page: 'not-found' };
}

/** Paths the app draws itself; everything else (login, logout, assets, /docs) is a real page load. */
const isAppPath = (path: string) => path === ROOT || (path.startsWith(`${ROOT}/`) && !/^\/dashboard\/(login|logout|auth|assets|api|session)(\/|$)/.test(path));

export function navigate(to: string): void {
  history.pushState(null, '', to);
  currentPath.value = normalize(location.pathname);
}

export function startRouter(): void {
  addEventListener('popstate', () => (currentPath.value = normalize(location.pathname)));
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = (event.target as Element | null)?.closest?.('a');
    if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin) return;
    // In-page links (the skip link) are the browser's to follow.
    if (link.hash && link.pathname === location.pathname) return;
    if (!isAppPath(normalize(link.pathname))) return;
    event.preventDefault();
    if (link.pathname + link.search !== location.pathname + location.search) navigate(link.pathname + link.search);
  });
}
