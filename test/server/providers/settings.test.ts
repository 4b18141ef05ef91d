/**
 * Provider settings are read from the names each provider declares, with config.ts's parsers, at
 * start-up: configuration stays a leaf, and a malformed value still names its variable.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../server/config.ts';
import { providerSettings } from '../../../server/providers/settings.ts';

describe('providerSettings', () => {
  it("reads a provider's key and the operator's overrides under its prefix", () => {
    const settings = providerSettings({ HUNTER_API_KEY: 'k', HUNTER_COST: '3', HUNTER_URL: 'http://127.0.0.1:9/' });
    expect(settings.hunter).toMatchObject({ key: 'k', configured: true, cost: 3, baseUrl: 'http://127.0.0.1:9/' });
    expect(providerSettings({}).hunter).toMatchObject({ key: null, configured: false });
  });

  it('refuses a malformed value with a message naming the variable', () => {
    expect(() => providerSettings({ HUNTER_COST: 'abc' })).toThrow(ConfigError);
    expect(() => providerSettings({ HUNTER_COST: 'abc' })).toThrow(/HUNTER_COST/);
    expect(() => providerSettings({ HUNTER_URL: 'ftp://x' })).toThrow(/HUNTER_URL must use http: or https:/);
  });
});
