/**
 * The frame every page shares: a skip link, the workspace and "Sign out", the navigation (the
 * current page marked `aria-current="page"`), the page, and the polite live region. Focus moves
 * to the new page's heading after each navigation, and the title names the page.
 */
import { useEffect, useRef } from 'preact/hooks';
import { getSession } from './api.ts';
import { liveMessage } from './live.ts';
import { useLoad } from './load.ts';
import { Agent } from './pages/agent.tsx';
import { CampaignPage } from './pages/campaign.tsx';
import { Campaigns } from './pages/campaigns.tsx';
import { Credits } from './pages/credits.tsx';
import { Jobs } from './pages/jobs.tsx';
import { Keys } from './pages/keys.tsx';
import { Overview } from './pages/overview.tsx';
import { Watches } from './pages/watches.tsx';
import { currentPath, routeOf, type Route } from './router.ts';

const NAV = [
  { href: '/dashboard', label: 'Overview', pages: ['overview'] },
  { href: '/dashboard/keys', label: 'API keys', pages: ['keys'] },
  { href: '/dashboard/credits', label: 'Credits', pages: ['credits'] },
  { href: '/dashboard/campaigns', label: 'Campaigns', pages: ['campaigns', 'campaign'] },
  { href: '/dashboard/jobs', label: 'Jobs', pages: ['jobs'] },
  { href: '/dashboard/watches', label: 'Watches', pages: ['watches'] },
  { href: '/dashboard/agent', label: 'Agent', pages: ['agent'] },
] as const;

const TITLES: Record<Route['page'], string> = {
  overview: 'Overview',
  keys: 'API keys',
  credits: 'Credits',
  campaigns: 'Campaigns',
  campaign: 'Campaign',
  jobs: 'Jobs',
  watches: 'Watches',
  agent: 'Agent',
  'not-found': 'Not found',
};

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <Overview />;
    case 'keys':
      return <Keys />;
    case 'credits':
      return <Credits />;
    case 'campaigns':
      return <Campaigns />;
    case 'campaign':
      return <CampaignPage key={route.campaignId} campaignId={route.campaignId} />;
    case 'jobs':
      return <Jobs />;
    case 'watches':
      return <Watches />;
    case 'agent':
      return <Agent />;
    case 'not-found':
      return (
        <>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            There is no such page. <a href="/dashboard">Go to the overview</a>.
          </p>
        </>
      );
  }
}

/** The workspace signed in to (and who, when the sign-in says), and "Sign out". */
function TopBar() {
  const session = useLoad(getSession, []);
  return (
    <header class="top">
      <a class="brand" href="/dashboard">
        prospecta
      </a>
      <span class="workspace">
        {session.state.status === 'ok' && (
          <>
            <span class="sr-only">Workspace: </span>
            {session.state.data.workspaceName}
            {session.state.data.who && <span class="muted"> · {session.state.data.who}</span>}
          </>
        )}
      </span>
      <form method="post" action="/dashboard/logout" class="sign-out">
        <button type="submit">Sign out</button>
      </form>
    </header>
  );
}

function MainNav({ page }: { page: Route['page'] }) {
  return (
    <nav class="main-nav" aria-label="Dashboard">
      <ul>
        {NAV.map((item) => (
          <li key={item.href}>
            <a href={item.href} aria-current={(item.pages as readonly string[]).includes(page) ? 'page' : undefined}>
              {item.label}
            </a>
          </li>
        ))}
        <li class="docs-link">
          <a href="/docs">API reference</a>
        </li>
      </ul>
    </nav>
  );
}

export function App() {
  const path = currentPath.value;
  const route = routeOf(path);
  const first = useRef(true);

  useEffect(() => {
    document.title = `${TITLES[route.page]} · prospecta`;
    if (first.current) {
      first.current = false;
      return;
    }
    // A new page: put the keyboard and the screen reader at its start.
    (document.querySelector('main h1') as HTMLElement | null)?.focus();
    scrollTo(0, 0);
  }, [path]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar />
      <MainNav page={route.page} />
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
      <div class="sr-only" aria-live="polite" role="status">
        {liveMessage.value}
      </div>
    </>
  );
}
