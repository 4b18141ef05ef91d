/**
 * createApp builds the Koa application from its dependencies and never listens, so tests drive
 * it over real HTTP on an ephemeral port and main.ts decides where it serves.
 *
 * The request id and the error handler wrap everything; then each surface is mounted on its own
 * prefix and meets only its own steps: the API (`/v1`, and the bare root as its alias), MCP, the
 * dashboard's API and its pages, the API reference, metrics. Within a surface, order matters: the
 * caller is identified before the rate limit so quotas are per credential, and rate-limit headers
 * are set before any route can fail, so every response carries them.
 */
import type Router from '@koa/router';
import Koa from 'koa';
import { protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceMetadataUrl } from '../auth/resource-metadata.ts';
import type { Handlers } from '../invocation/handler.ts';
import { createHandlers } from './handlers.ts';
import { mcpOrigin } from '../mcp/origin.ts';
import { MCP_PATH, mcpRoute } from '../mcp/route.ts';
import { SERVER_CARD_PATH, serverCard } from '../mcp/server-card.ts';
import { apiReference, DOCS_PATH } from '../dashboard/api-reference.ts';
import { Assets } from '../dashboard/assets.ts';
import { DASHBOARD_PREFIX, dashboard } from '../dashboard/routes.ts';
import { PACKAGE_ROOT } from '../lib/package-root.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import { identify } from '../http/authenticate.ts';
import { errorHandler, unmatchedRoutes } from '../http/error-handler.ts';
import { buildOpenApi } from '../http/openapi.ts';
import { chain } from '../http/chain.ts';
import { METRICS_PATH, metricsRoute } from '../http/metrics-route.ts';
import { requestContext } from '../http/request-context.ts';
import { HeldStreams, type HeldStreamLimits } from '../http/held-streams.ts';
import { registryRoutes } from '../http/routes.ts';
import type { AppState, Middleware, RoutedContext } from '../http/state.ts';
import { throttle } from '../http/throttle.ts';
import { versioning } from '../http/versioning.ts';
import type { AppServices } from './bootstrap.ts';

export interface AppOptions {
  /**
   * Replace some handlers (tests of bindings, e.g. streams); as a function, given the ones built,
   * to wrap a real handler.
   */
  handlers?: Partial<Handlers> | ((built: Handlers) => Partial<Handlers>);
  /** Trust X-Forwarded-For for the client IP (behind a proxy); by default TRUST_PROXY. */
  proxy?: boolean;
  /** The dashboard's built files; by default dist/dashboard (built by `npm run build`). */
  dashboardAssets?: Assets;
  /** How long and how many streams are held for reconnections (tests shorten them). */
  streams?: Partial<HeldStreamLimits>;
  /** false: this process runs no jobs (a test of something else that needs no runner). @default true */
  jobs?: boolean;
}

export function createApp(services: AppServices, options: AppOptions = {}): Koa<AppState, RoutedContext> {
  // Only the last X-Forwarded-For entry, the one our proxy appended: the ones before it are
  // whatever the client sent, and taking the first would let it choose its own rate-limit bucket.
  const app = new Koa<AppState, RoutedContext>({ proxy: options.proxy ?? services.config.trustProxy, maxIpsCount: 1 });
  // Errors are answered by errorHandler; Koa's own handler would only log them again.
  app.silent = true;

  // Built on first request: a tenth of the server's start-up, for a document few ask for.
  let openapi: ReturnType<typeof buildOpenApi> | undefined;
  const built = createHandlers(services);
  const replaced = typeof options.handlers === 'function' ? options.handlers(built) : options.handlers;
  const pipeline = createPipeline(services, { ...built, ...replaced });
  // Jobs run their items through this app's pipeline, as its routes do.
  if (options.jobs !== false) services.jobRunner.start(pipeline);
  const resourceMetadata = protectedResourceMetadata(services.config.publicUrl, services.config.oauth.issuer);
  // RFC 9728 §3.1's address of `/mcp`'s metadata: a 401 names it, and so does the server card.
  const mcpResourceMetadata = `${services.config.publicUrl}${RESOURCE_METADATA_PATH}${MCP_PATH}`;
  const card = serverCard(resourceMetadata, mcpResourceMetadata, services.version);
  const mount = registryRoutes(pipeline, new HeldStreams(options.streams));
  const extraRoutes = (r: Router<AppState>) => {
    r.get('/openapi.json', (ctx) => {
      ctx.state.operation = 'openapi';
      ctx.body = openapi ??= buildOpenApi(services.version, services.config.publicUrl);
    });
    // The root is where people type the address: the dashboard is what they are looking for.
    r.get('/', (ctx) => {
      ctx.state.operation = 'dashboard';
      ctx.redirect('/dashboard');
    });
    r.get([RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}/mcp`], (ctx) => {
      ctx.state.operation = 'resource_metadata';
      // Clients read it once per authorization; it changes only with the configuration.
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = resourceMetadata;
    });
    r.get(SERVER_CARD_PATH, (ctx) => {
      ctx.state.operation = 'server_card';
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = card;
    });
  };

  const assets = options.dashboardAssets ?? Assets.load(new URL('dist/dashboard/', PACKAGE_ROOT));
  const { sessions, signInLinks, oidcSignIn, workspaces } = services;
  const board = dashboard({ sessions, signInLinks, oidcSignIn, workspaces, publicUrl: services.config.publicUrl }, assets);
  const identified = [identify(services.credentials), throttle(services.rateLimiter)];
  const api = chain(...identified, versioning());
  const v1 = chain(api, mount('/v1', extraRoutes));
  const bare = chain(api, mount('', extraRoutes));
  // DNS-rebinding protection first: before a credential is looked up or a request counted.
  const mcp = chain(mcpOrigin(services.config.publicUrl, services.config.mcpAllowedOrigins), api, mcpRoute({
    pipeline,
    version: services.version,
    resourceMetadata: mcpResourceMetadata,
  }));
  // The dashboard's API names its caller by session cookie, where `identify` reads a bearer.
  const boardApi = chain(board.api, api, mount(DASHBOARD_PREFIX));
  const boardPages = chain(...identified, board.pages);
  const docs = chain(...identified, apiReference(assets));
  // Prometheus' scrape, with its own token: no identification, no rate limit.
  const metrics = metricsRoute(services.config.metricsToken);

  const under = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  const surfaceOf = (path: string): Middleware => {
    if (path === MCP_PATH || path === `/v1${MCP_PATH}`) return mcp;
    if (under(path, '/v1')) return v1;
    if (path.startsWith(`${DASHBOARD_PREFIX}/api/`)) return boardApi;
    if (under(path, DASHBOARD_PREFIX)) return boardPages;
    if (under(path, DOCS_PATH)) return docs;
    if (path === METRICS_PATH) return metrics;
    return bare;
  };
  const surfaces: Middleware = (ctx, next) => surfaceOf(ctx.path)(ctx, next);

  app.use(requestContext(services.log));
  app.use(errorHandler(resourceMetadataUrl(services.config.publicUrl)));
  app.use(unmatchedRoutes());
  app.use(surfaces);
  return app;
}
