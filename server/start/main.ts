/**
 * `npm start`: config → store → services → app → listen. On an empty embedded store it loads the
 * demo data and prints the demo workspace's key, unless NODE_ENV=production. SIGTERM/SIGINT stop accepting connections, let
 * in-flight requests finish, then flush and release the store.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import pino from 'pino';
import { createApp } from './app.ts';
import { BatchedDestination } from '../lib/log-destination.ts';
import { answerClientErrors } from '../http/client-error.ts';
import { bootstrap } from './bootstrap.ts';
import { controlSocketPath, serveControl } from '../cli/control.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { patchBottleneckYield } from '../outbound/bottleneck-yield.ts';
import { DEMO_CREDITS, demoWorkspaceId, seedDemo } from '../seed/demo.ts';
import { VERSION } from '../lib/version.ts';

const SHUTDOWN_GRACE_MS = 10_000;
/** The embedded store's refusals to open: their message says what to do. */
const STORE_REFUSALS = new Set(['STORE_LOCKED', 'STORE_CORRUPT', 'MONGODB_UNREACHABLE']);

/**
 * Replaying a large embedded store discards far more than it keeps, and leaves the heap just
 * under the size that starts V8's next full collection. Collected now, before the first request,
 * rather than by that collection soon after: at 1,000,000 registry companies it paused one
 * request for 100 ms and slowed a few hundred more with its marking steps. (`gc` is exposed the
 * way `--expose-gc` would, so no one has to remember the flag.)
 */
function collectStartupGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/**
 * V8 moves an allocation site's objects straight to the old generation once most of them have
 * outlived a young collection. Loading the demo data (or any bulk write) teaches that to sites the
 * request path shares with it, and for the rest of the process each request's garbage was then
 * made old and kept the young objects it points at alive: on bench:http a constant answer cost
 * 26 µs of CPU instead of bare Koa's 14. Without pretenuring the old generation only receives
 * what lived through two young collections, which long-lived store data does anyway.
 */
function keepRequestGarbageYoung(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}

async function main(): Promise<void> {
  keepRequestGarbageYoung();
  patchBottleneckYield();
  const config = loadConfig();
  // Asynchronous writes: a synchronous write per access-log line costs a syscall per request.
  const destination = new BatchedDestination(pino.destination({ dest: 1, sync: false }));
  const log = pino({ level: config.logLevel, base: { service: 'prospecta' } }, destination);
  const runtime = await bootstrap(config, log, VERSION);
  const { services } = runtime;

  // In production the store holds real customers: no demo workspace, and no secret on stderr,
  // where a log collector would keep it.
  const demoAllowed = services.store.kind === 'embedded' && !config.production;
  const demo = demoAllowed && (await services.workspaces.count()) === 0 ? await seedDemo(services) : null;
  const demoWorkspace = demoAllowed ? await demoWorkspaceId(services) : null;

  if (services.store.kind === 'embedded') collectStartupGarbage();
  const control = services.store.kind === 'embedded' ? await serveControl(services, controlSocketPath(config.dataDir)) : null;
  const app = createApp(services);
  const server: Server = app.listen(config.port, config.host);
  answerClientErrors(server, log);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Handlers first: once the line below is out, a supervisor may already send SIGTERM.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    forced.unref();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
    control?.close();
    await runtime.close();
    log.info('stopped');
    destination.flushSync();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = server.address();
  // The address as it is now (PORT=0 picks one), unless PUBLIC_URL says how clients reach it.
  const reachable = config.env.PUBLIC_URL ? config.publicUrl : `http://localhost:${(address as AddressInfo).port}`;
  if (demo) process.stderr.write(demoBanner(demo, `${reachable}/v1/api`));
  if (demoWorkspace) {
    // A fresh link at every start: links work once, for 10 minutes.
    const { url } = await services.signInLinks.issue(demoWorkspace);
    const link = reachable + url.slice(config.publicUrl.length);
    process.stderr.write(`Dashboard of the demo workspace (a one-time sign-in link, valid 10 minutes):\n  ${link}\n\n`);
  }
  log.info({ address, store: services.store.kind, version: VERSION }, 'prospecta listening');
}

function demoBanner(demo: Awaited<ReturnType<typeof seedDemo>>, base: string): string {
  const auth = `-H "Authorization: Bearer ${demo.apiKey}"`;
  return (
    `\nLoaded the demo data: a workspace with ${DEMO_CREDITS.toLocaleString('en')} credits and ` +
    `${demo.companiesImported.toLocaleString('en')} synthetic registry companies, ` +
    `${demo.peopleAdded.toLocaleString('en')} synthetic people.\n` +
    `Demo workspace ${demo.workspaceId}; its API key (shown once):\n\n  ${demo.apiKey}\n\n` +
    `Try:\n  curl ${auth} ${base}/credits\n` +
    `  curl ${auth} -H "Content-Type: application/json" -d '{"industry":"padaria","state":"SP","registrationStatuses":["ATIVA"]}' ${base}/companies/search\n` +
    `  curl ${auth} -H "Content-Type: application/json" -d '{"jobTitle":"CEO","limit":5}' ${base}/sourcing/people\n\n`
  );
}

main().catch((err: unknown) => {
  // What an operator must act on (configuration, a store in use or damaged) is said plainly, without a stack.
  if (err instanceof ConfigError || STORE_REFUSALS.has((err as { code?: string }).code ?? '')) {
    process.stderr.write(`prospecta: ${(err as Error).message}\n`);
  } else {
    process.stderr.write(`prospecta: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
  process.exit(1);
});
