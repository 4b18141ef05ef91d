/**
 * The providers as this process runs them: each with its settings, its throttled HTTP client and
 * circuit breaker, made on first use and shared by every request. A workspace's own key gets a
 * client (and a limiter) of its own, so that its calls neither spend nor wait for the shared budget.
 */
import type Bottleneck from 'bottleneck';
import type { Logger } from 'pino';
import type { ProviderCatalog } from '../../shared/types.ts';
import { CircuitBreaker } from '../outbound/circuit-breaker.ts';
import type { Clock } from '../outbound/clock.ts';
import { ENRICH_FIELDS } from './fields.ts';
import { ProviderHttp } from './http.ts';
import { closeLimiter, createLimiter, throttleFor } from '../outbound/limiter.ts';
import type { Provider } from './data-provider.ts';
import { buildProviders, type ProviderLookups } from './declared.ts';
import type { ProviderSettings } from './settings.ts';
import { fingerprint, type WorkspaceProviderKeys } from './workspace-keys.ts';

/** A provider ready to be called for one workspace. */
export interface ProviderSlot {
  provider: Provider;
  http: ProviderHttp;
  /** Credits a call that returns data costs: 0 with the workspace's own key. */
  cost: number;
  ownKey: boolean;
}

export interface ProvidersOptions {
  /** Each provider's settings, read at start-up (`providerSettings`). */
  settings: Record<string, ProviderSettings>;
  /** Limiters shared through Redis (REDIS_URL), else in memory. */
  redisUrl: string | undefined;
  /** The longest a provider's `Retry-After` may pause a key's calls (PROVIDER_MAX_PAUSE_SECONDS). */
  maxPauseMs: number;
  log: Logger;
  keys: WorkspaceProviderKeys;
  /** What the local providers (the imported registry, BrasilAPI) read. */
  lookups: ProviderLookups;
  /** Instead of the global fetch (tests). */
  fetch?: typeof fetch;
  /** What provider calls wait on (Retry-After, backoff). @default the system's */
  clock?: Clock;
}

export class Providers {
  readonly all: readonly Provider[];
  private readonly clients = new Map<string, { http: ProviderHttp; limiter: Bottleneck }>();

  constructor(private readonly options: ProvidersOptions) {
    this.all = buildProviders(options.lookups);
  }

  get(id: string): Provider | undefined {
    return this.all.find((p) => p.id === id);
  }

  settings(id: string): ProviderSettings {
    return this.options.settings[id]!;
  }

  /** `GET /api/providers`: every provider, whether it can be called here, and the fields on offer. */
  catalog(): Omit<ProviderCatalog, 'languageModel'> {
    const list = this.all.map((p) => {
      const s = this.settings(p.id);
      return {
        id: p.id,
        name: p.name,
        kind: p.kind,
        inputs: p.inputs,
        outputs: p.outputs,
        cost: s.cost,
        configured: s.configured,
        limits: { perSecond: s.perSecond ?? null, perMinute: s.perMinute ?? null, maxConcurrent: s.maxConcurrent },
        ...(p.keyVariable ? { keyVariable: p.keyVariable } : {}),
        ...(p.switchVariable ? { switchVariable: p.switchVariable } : {}),
        ...this.paused(p.id),
      };
    });
    const offered = new Set(list.filter((p) => p.configured).flatMap((p) => p.outputs));
    return { providers: list, enrichmentFields: ENRICH_FIELDS.filter((f) => offered.has(f)) };
  }

  /**
   * The pause a 429 put on the service's own key, if any. A workspace's own key has a client of
   * its own, so its pauses are its own and never show here (the catalog is not a workspace's).
   */
  private paused(id: string): { pausedUntil?: string } {
    const until = id === 'brasilapi' ? this.options.lookups.remoteCompanies?.pausedUntil() : this.clients.get(id)?.http.pausedUntil();
    return until ? { pausedUntil: until.toISOString() } : {};
  }

  /** The providers a workspace can call now, keyed by id, with the key and price each call uses. */
  async forWorkspace(workspaceId: string): Promise<Map<string, ProviderSlot>> {
    const own = await this.options.keys.keysFor(workspaceId);
    const slots = new Map<string, ProviderSlot>();
    for (const provider of this.all) {
      const s = this.settings(provider.id);
      // One service, one key: a workspace's Hunter key serves the finder and the verifier alike.
      const ownKey = provider.keyVariable
        ? (own.get(provider.id) ?? this.all.filter((p) => p.keyVariable === provider.keyVariable).map((p) => own.get(p.id)).find(Boolean))
        : undefined;
      if (!ownKey && !s.configured) continue;
      const providers = this;
      slots.set(provider.id, {
        provider,
        // Made on first use: local sources never need one.
        get http() {
          return providers.client(provider, ownKey ?? s.key);
        },
        cost: ownKey ? 0 : s.cost,
        ownKey: Boolean(ownKey),
      });
    }
    return slots;
  }

  /** The shared client for a provider's service key, or the one for a workspace key. */
  client(provider: Provider, key: string | null): ProviderHttp {
    const s = this.settings(provider.id);
    const own = key !== null && key !== s.key;
    const id = own ? `${provider.id}:key:${fingerprint(key)}` : provider.id;
    let client = this.clients.get(id);
    if (!client) {
      const { redisUrl, log } = this.options;
      const onError = (err: Error) => log.warn({ err: err.message, provider: provider.id }, 'provider limiter redis error');
      const limiter = createLimiter(
        id,
        throttleFor({ perSecond: s.perSecond, perMinute: s.perMinute, maxConcurrent: s.maxConcurrent }),
        redisUrl ? { url: redisUrl, onError } : undefined,
      );
      const http = new ProviderHttp({
        provider: provider.name,
        // Its id, not the key's client id: a workspace's own key is counted under its provider.
        service: provider.id,
        baseUrl: s.baseUrl ?? 'http://localhost',
        key,
        limiter,
        breaker: new CircuitBreaker(),
        timeoutMs: s.timeoutMs,
        ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
        clock: this.options.clock,
        maxPauseMs: this.options.maxPauseMs,
      });
      client = { http, limiter };
      this.clients.set(id, client);
    }
    return client.http;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map(({ limiter }) => closeLimiter(limiter)));
    this.clients.clear();
  }
}
