/**
 * Opens everything a process needs, in order: store, indexes, Redis (when configured), services.
 * Shared by the server and the CLI so both see the same data the same way.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { Conversations, conversationIndexes } from '../agent/conversations.ts';
import type { OAuth } from '../auth/credentials.ts';
import { OidcSignIn, oidcSignInIndexes } from '../dashboard/oidc-sign-in.ts';
import { Sessions, sessionIndexes } from '../dashboard/sessions.ts';
import { SignInLinks, signInLinkIndexes } from '../dashboard/sign-in-links.ts';
import { createRateLimiter, type RateLimiter } from '../http/rate-limit.ts';
import type { Clock } from '../outbound/clock.ts';
import { closeLimiter, createLimiter, throttleFor } from '../outbound/limiter.ts';
import { BRASILAPI_LIMITS, BrasilApiSource } from '../providers/brasilapi-client.ts';
import { Llm, llmSettings } from '../ai/llm.ts';
import { webSearchFrom } from '../ai/web-search.ts';
import { secretFile, WorkspaceProviderKeys } from '../providers/workspace-keys.ts';
import { cacheInvalidation } from './cache-invalidation.ts';
import { createServices, indexDeclarations, type Services } from './services.ts';
import { IdempotencyKeys, idempotencyIndexes } from '../pipeline/idempotency.ts';
import { ensureIndexes, openStore } from '../store/open.ts';
import type { Store } from '../store/port.ts';

const REVOKED_CHANNEL = 'prospecta:keys:revoked';
const MEMBERS_CHANNEL = 'prospecta:members:changed';

/** The domain's services, and what the pipeline and the bindings keep of their own. */
export interface AppServices extends Services {
  /** Answers stored under `Idempotency-Key`s, replayed for 24 h (the pipeline's). */
  idempotency: IdempotencyKeys;
  /** The agent's conversations, per workspace. */
  conversations: Conversations;
  /** Dashboard sessions, and the two ways to start one. */
  sessions: Sessions;
  signInLinks: SignInLinks;
  /** "Sign in with …" at the issuer; null without OAUTH_ISSUER and OAUTH_CLIENT_ID. */
  oidcSignIn: OidcSignIn | null;
  rateLimiter: RateLimiter;
}

export interface Runtime {
  services: AppServices;
  close(): Promise<void>;
}

/**
 * `command`: a one-shot CLI command. On the embedded store it builds an index only when a query
 * first uses it, so an import does not maintain indexes the command never reads, and it may
 * bulk load a collection without holding it in memory.
 */
export type ProcessRole = 'server' | 'command';

export interface BootstrapOptions {
  /** What calls to the outside wait on (Retry-After, backoff). @default the system's; tests give a virtual one */
  clock?: Clock;
  /** The time jobs read (leases, retention): tests move it days ahead. @default Date.now */
  jobsNow?: () => number;
}

export async function bootstrap(
  config: Config,
  log: Logger,
  version: string,
  role: ProcessRole = 'server',
  { clock, jobsNow }: BootstrapOptions = {},
): Promise<Runtime> {
  const indexes = [...indexDeclarations, ...idempotencyIndexes, ...conversationIndexes, ...sessionIndexes, ...signInLinkIndexes, ...oidcSignInIndexes];
  const store = await openStore({
    indexes,
    mongodbUri: config.mongodbUri,
    dataDir: config.dataDir,
    onBackgroundError: (err) => log.error({ err }, 'store background work failed'),
    onWarning: (message) => log.warn(message),
    oneShot: role === 'command',
  });
  const closers: Array<() => Promise<unknown>> = [() => store.close()];
  try {
    await ensureIndexes(store, indexes);

    let redis: Redis | undefined;
    let subscriber: Redis | undefined;
    if (config.redisUrl) {
      // Loaded only when configured: the client's modules are a quarter of a second of start-up.
      const { Redis } = await import('ioredis');
      // No offline queue: while Redis is away, calls fail fast and the in-process limiter takes over.
      redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      subscriber = new Redis(config.redisUrl);
      redis.on('error', (err) => log.warn({ err: err.message }, 'redis error'));
      subscriber.on('error', (err) => log.warn({ err: err.message }, 'redis subscriber error'));
      closers.unshift(() => redis!.quit(), () => subscriber!.quit());
    }

    let remoteCompanies: BrasilApiSource | null = null;
    if (config.brasilApi.enabled) {
      const onError = (err: Error) => log.warn({ err: err.message }, 'brasilapi limiter redis error');
      const limiter = createLimiter('brasilapi', throttleFor(BRASILAPI_LIMITS), config.redisUrl ? { url: config.redisUrl, onError } : undefined);
      closers.unshift(() => closeLimiter(limiter));
      remoteCompanies = new BrasilApiSource({ baseUrl: config.brasilApi.url, limiter, clock, maxPauseMs: config.providerMaxPauseSeconds * 1000 });
    }

    const providerKeys = new WorkspaceProviderKeys(
      store,
      config.providerKeySecret ?? (store.kind === 'embedded' ? await secretFile(config.dataDir) : undefined),
    );
    const settings = llmSettings(config.llm);
    const llm = settings ? new Llm(settings, store, config.redisUrl, clock) : null;
    if (llm) closers.unshift(() => llm.close());

    const domain = createServices({
      config,
      store,
      log,
      remoteCompanies,
      providerKeys,
      llm,
      webSearch: webSearchFrom(config.webSearch),
      version,
      clock,
      jobsNow,
    });
    const services: AppServices = {
      ...domain,
      idempotency: new IdempotencyKeys(store, Date.now, config.idempotencyLeaseMs),
      conversations: new Conversations(store),
      sessions: new Sessions(store, domain.members),
      signInLinks: new SignInLinks(store, config.publicUrl),
      oidcSignIn: oidcSignInOf(config, store, domain.oauth, log),
      rateLimiter: createRateLimiter(config.rateLimitPerMinute, redis),
    };

    // Last before the store: outbox pulls still being written (MongoDB) land first.
    closers.unshift(() => services.credits.settled());
    closers.unshift(() => services.providers.close(), () => services.webhooks.close());
    // First: items in flight stop (their leases let them run again) before what they use closes.
    closers.unshift(() => services.jobRunner.close());

    if (redis && subscriber) {
      const announce = await cacheInvalidation(redis, subscriber, {
        [REVOKED_CHANNEL]: (hash) => services.keys.forget(hash),
        [MEMBERS_CHANNEL]: (key) => services.members.forget(key),
      });
      services.keys.onRevoke = announce[REVOKED_CHANNEL];
      services.members.onChange = announce[MEMBERS_CHANNEL];
    }

    await services.credits.recover();
    await services.credits.startDailyCounts();
    // The embedded store is this process's alone: a claim still running was left by a dead one.
    if (store.kind === 'embedded') {
      await services.idempotency.settleAbandoned();
      await services.webhooks.resumeAbandoned();
    }
    // Only the release file's meta is read: a damaged file is named now, not at the first lookup.
    const registryProblem = services.companies.registry?.problem();
    if (registryProblem) log.error(registryProblem);
    const registry = services.companies.registry;
    if (registry) closers.push(async () => registry.close());
    closers.push(async () => services.changeHistory.close());
    return {
      services,
      async close() {
        for (const close of closers) await close().catch((err) => log.warn({ err }, 'close failed'));
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => {});
    throw err;
  }
}

function oidcSignInOf(config: Config, store: Store, oauth: OAuth | null, log: Logger): OidcSignIn | null {
  const { issuer, clientId, clientSecret, fetchTimeoutMs } = config.oauth;
  if (!issuer || !clientId || !oauth) return null;
  return new OidcSignIn({ issuer, clientId, clientSecret, publicUrl: config.publicUrl, timeoutMs: fetchTimeoutMs }, store, oauth.subjects, log);
}
