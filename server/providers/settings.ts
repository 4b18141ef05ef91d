/**
 * Each provider's settings, read from the environment under the names its declaration gives
 * (`HUNTER_API_KEY`, `HUNTER_COST`, `HUNTER_RATE_PER_MINUTE`…), with config.ts's parsers: the
 * variables a provider adds come with the provider, and configuration stays a leaf. Read at
 * start-up (services.ts), so a malformed value still stops it with a message naming the variable.
 */
import { flag, integer, text, url, type Env } from '../config.ts';
import { envPrefix } from './data-provider.ts';
import { declarations } from './declared.ts';

export interface ProviderSettings {
  /** The service's key, or null when unset (the provider is then not configured). */
  key: string | null;
  /** Whether it may be called: its key is set, or its switch is on for a keyless one. */
  configured: boolean;
  baseUrl: string | null;
  perSecond: number | undefined;
  perMinute: number | undefined;
  maxConcurrent: number;
  cost: number;
  /** How long one attempt may take, answer included. */
  timeoutMs: number;
}

/** Per provider: its key and the operator's overrides of its declared URL, limits and cost. */
export function providerSettings(env: Env): Record<string, ProviderSettings> {
  const settings: Record<string, ProviderSettings> = {};
  for (const p of declarations) {
    const prefix = envPrefix(p.id);
    const optional = (name: string, declared: number | undefined) =>
      declared === undefined && text(env, name) === undefined ? undefined : integer(env, name, declared ?? 0, 1, 1_000_000);
    const key = p.keyVariable ? (text(env, p.keyVariable) ?? null) : null;
    settings[p.id] = {
      key,
      configured: (p.keyVariable === null || key !== null) && (!p.switchVariable || flag(env, p.switchVariable, false)),
      baseUrl: p.baseUrl === null ? null : (url(env, `${prefix}_URL`, ['http:', 'https:']) ?? p.baseUrl),
      perSecond: optional(`${prefix}_RATE_PER_SECOND`, p.limits.perSecond),
      perMinute: optional(`${prefix}_RATE_PER_MINUTE`, p.limits.perMinute),
      maxConcurrent: integer(env, `${prefix}_MAX_CONCURRENT`, p.limits.maxConcurrent, 1, 10_000),
      cost: integer(env, `${prefix}_COST`, p.cost, 0, 1000),
      timeoutMs: integer(env, `${prefix}_TIMEOUT_MS`, p.timeoutMs ?? 10_000, 100, 120_000),
    };
  }
  return settings;
}

