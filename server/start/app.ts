/**
 * createApp builds the Koa application from its dependencies and never listens, so tests drive
 * it over real HTTP on an ephemeral port and main.ts decides where it serves.
 *
 * Order matters: the request id and the error handler wrap everything; the caller is identified
 * before the rate limit so quotas are per credential; rate-limit headers are set before any
 * route can fail, so every response carries them.
 */
import Koa from 'koa';
import { protectedResourceMetadata, RESOURCE_METADATA_PATH, resourceMetadataUrl } from '../auth/resource-metadata.ts';
import type { Handlers } from '../invocation/handler.ts';
import { createHandlers } from './handlers.ts';
import { mcpOrigin } from '../mcp/origin.ts';
import { MCP_PATH, mcpRoute } from '../mcp/route.ts';
import { SERVER_CARD_PATH, serverCard } from '../mcp/server-card.ts';
import { apiReference } from '../dashboard/api-reference.ts';
import { Assets } from '../dashboard/assets.ts';
import { dashboard } from '../dashboard/routes.ts';
import { PACKAGE_ROOT } from '../lib/package-root.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import { identify } from '../http/authenticate.ts';
import { errorHandler, unmatchedRoutes } from '../http/error-handler.ts';
import { buildOpenApi } from '../http/openapi.ts';
import { metricsRoute } from '../http/metrics-route.ts';
import { requestContext } from '../http/request-context.ts';
import { HeldStreams, type HeldStreamLimits } from '../http/held-streams.ts';
import { buildRouter, routeTable } from '../http/routes.ts';
import type { AppState } from '../http/state.ts';
import { throttle } from '../http/throttle.ts';
import { stripVersionPrefix, versioning } from '../http/versioning.ts';
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

export function createApp(services: AppServices, options: AppOptions = {}): Koa<AppState> {
  // Only the last X-Forwarded-For entry, the one our proxy appended: the ones before it are
  // whatever the client sent, and taking the first would let it choose its own rate-limit bucket.
  const app = new Koa<AppState>({ proxy: options.proxy ?? services.config.trustProxy, maxIpsCount: 1 });
  // Errors are answered by errorHandler; Koa's own handler would only log them again.
  app.silent = true;

  const openapi = buildOpenApi(services.version, services.config.publicUrl);
  const built = createHandlers(services);
  const replaced = typeof options.handlers === 'function' ? options.handlers(built) : options.handlers;
  const pipeline = createPipeline(services, { ...built, ...replaced });
  // Jobs run their items through this app's pipeline, as its routes do.
  if (options.jobs !== false) services.jobRunner.start(pipeline);
  const resourceMetadata = protectedResourceMetadata(services.config.publicUrl, services.config.oauth.issuer);
  // RFC 9728 §3.1's address of `/mcp`'s metadata: a 401 names it, and so does the server card.
  const mcpResourceMetadata = `${services.config.publicUrl}${RESOURCE_METADATA_PATH}${MCP_PATH}`;
  const card = serverCard(resourceMetadata, mcpResourceMetadata, services.version);
  const router = buildRouter(pipeline, new HeldStreams(options.streams), (r) => {
    r.get('/openapi.json', (ctx) => {
      ctx.state.operation = 'openapi';
      ctx.body = openapi;
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
  });

  const assets = options.dashboardAssets ?? Assets.load(new URL('dist/dashboard/', PACKAGE_ROOT));
  const { sessions, signInLinks, oidcSignIn, workspaces } = services;
  const board = dashboard({ sessions, signInLinks, oidcSignIn, workspaces, publicUrl: services.config.publicUrl }, assets);
  const middleware = [
    requestContext(services.log),
    errorHandler(resourceMetadataUrl(services.config.publicUrl)),
    // DNS-rebinding protection: before a credential is looked up or a request counted.
    mcpOrigin(services.config.publicUrl, services.config.mcpAllowedOrigins),
    // Prometheus' scrape, with its own token: before identification and the rate limit.
    metricsRoute(services.config.metricsToken),
    // The dashboard's API names its caller by session cookie, where `identify` reads a bearer.
    board.api,
    identify(services.credentials),
    throttle(services.rateLimiter),
    board.pages,
    apiReference(assets),
    versioning(),
    stripVersionPrefix(),
    mcpRoute({
      pipeline,
      version: services.version,
      resourceMetadata: mcpResourceMetadata,
    }),
    unmatchedRoutes(),
  ];
  for (const m of middleware) app.use(m as Koa.Middleware<AppState>);
  app.use(routeTable(router) as Koa.Middleware<AppState>);
  app.use(router.allowedMethods());
  return app;
}
