/**
 * Settings: each user's API key and server URL live in that user's properties, never in the
 * document, so sharing a spreadsheet never shares a key.
 */
import { limitOf, ProspectaClient, type ClientSettings } from '../api/client.ts';
import type { HttpPort } from '../api/http.ts';
import { plainError } from './errors.ts';
import type { PropertiesPort } from './ports.ts';

const KEY = 'prospecta.apiKey';
const URL_KEY = 'prospecta.serverUrl';
const KEY_FORMAT = /^service_live_[0-9A-Za-z]{32,128}$/;
const URL_FORMAT = /^https:\/\/[^\s/]+(\/[^\s]*)?$|^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?(\/[^\s]*)?$/;

export class SettingsError extends Error {}

/** Set by addon/build.mjs (esbuild's `define`) to the address its manifest whitelists. */
declare const PROSPECTA_SERVER_URL: string | undefined;

/**
 * The server the build fixed: Apps Script fetches nothing but the manifest's address, so asking
 * the analyst for another could only fail. null in a build that fixed none (the tests').
 */
export const BUILT_SERVER: string | null = typeof PROSPECTA_SERVER_URL === 'string' ? PROSPECTA_SERVER_URL.replace(/\/+$/, '') : null;

/** What every feature says when the user has not entered a key (and a server) yet. */
export const NOT_CONFIGURED = BUILT_SERVER ? 'Open Settings and enter your API key first.' : 'Open Settings and enter your API key and server URL first.';

/** `serverUrl` is only read where the build fixed no server. */
export function saveSettings(props: PropertiesPort, input: { apiKey: string; serverUrl?: string }): void {
  const apiKey = input.apiKey.trim();
  const serverUrl = BUILT_SERVER ?? (input.serverUrl ?? '').trim().replace(/\/+$/, '');
  if (!KEY_FORMAT.test(apiKey)) throw new SettingsError('The API key should look like service_live_ followed by letters and digits.');
  if (!URL_FORMAT.test(serverUrl)) throw new SettingsError('The server URL must start with https:// (http:// only for localhost).');
  props.set(KEY, apiKey);
  if (!BUILT_SERVER) props.set(URL_KEY, serverUrl);
}

export function loadSettings(props: PropertiesPort): ClientSettings | null {
  const apiKey = props.get(KEY);
  const baseUrl = BUILT_SERVER ?? props.get(URL_KEY);
  return apiKey && baseUrl ? { apiKey, baseUrl } : null;
}

/** "Test connection": one credits read, reported as the balance and plan, or as a plain error. */
export function testConnection(props: PropertiesPort, http: HttpPort): { ok: boolean; message: string } {
  const settings = loadSettings(props);
  if (!settings) return { ok: false, message: NOT_CONFIGURED };
  try {
    const credits = new ProspectaClient(http, settings).call('getCredits', {});
    const plan = credits.plan.expiresAt
      ? `${credits.plan.name} plan until ${credits.plan.expiresAt.slice(0, 10)}`
      : `${credits.plan.name} plan`;
    return { ok: true, message: `Connected: ${credits.balance} credits, ${plan}.` };
  } catch (err) {
    return { ok: false, message: plainError(err) };
  }
}

const MAX_AGE_KEY = 'prospecta.maxAgeDays';
const DAY_SECONDS = 86_400;
/** The most days enrich's `maxAge` allows, from the registry's schema. */
export const MAX_AGE_DAYS = Math.floor(limitOf('enrich', 'maxAge', 'maximum') / DAY_SECONDS);

/**
 * How old (in days) an enrichment the workspace paid for may be to be given again for nothing;
 * null leaves it to the server's default. A user setting: each analyst chooses their freshness.
 */
export function maxAgeDays(props: PropertiesPort): number | null {
  const days = props.get(MAX_AGE_KEY);
  return days === null ? null : Number(days);
}

/** null (or an empty field) goes back to the server's default. */
export function setMaxAgeDays(props: PropertiesPort, days: number | null): void {
  if (days === null) return props.delete(MAX_AGE_KEY);
  if (!Number.isInteger(days) || days < 0 || days > MAX_AGE_DAYS) throw new SettingsError(`Reuse enrichments paid for within 0 to ${MAX_AGE_DAYS} days (0 always pays again).`);
  props.set(MAX_AGE_KEY, String(days));
}

/** The setting as enrich's `maxAge`, in seconds; absent for the server's default. */
export function maxAgeOption(props: PropertiesPort): { maxAge?: number } {
  const days = maxAgeDays(props);
  return days === null ? {} : { maxAge: days * DAY_SECONDS };
}
