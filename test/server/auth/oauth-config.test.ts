import { describe, expect, it } from 'vitest';
import { metadataUrls } from '../../../server/auth/issuer-discovery.ts';
import { ConfigError, loadConfig } from '../../../server/config.ts';

describe('OAuth configuration', () => {
  it('keeps OAUTH_ISSUER exactly as written and defaults the audience to {PUBLIC_URL}/mcp', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://prospecta.example/', OAUTH_ISSUER: 'https://tenant.auth0.com/' });
    expect(config.oauth).toEqual({
      issuer: 'https://tenant.auth0.com/',
      audience: 'https://prospecta.example/mcp',
      jwksUrl: undefined,
      autoSignup: true,
      fetchTimeoutMs: 5000,
    });
  });

  it('refuses an issuer that is not an http(s) URL, and a timeout out of range', () => {
    expect(() => loadConfig({ OAUTH_ISSUER: 'tenant.auth0.com' })).toThrow(ConfigError);
    expect(() => loadConfig({ OAUTH_ISSUER: 'ftp://idp.example' })).toThrow(/OAUTH_ISSUER must use https: or http:/);
    expect(() => loadConfig({ OAUTH_FETCH_TIMEOUT_MS: '10' })).toThrow(/OAUTH_FETCH_TIMEOUT_MS/);
    expect(() => loadConfig({ OAUTH_AUTO_SIGNUP: 'maybe' })).toThrow(/OAUTH_AUTO_SIGNUP/);
  });

  it('looks for the issuer metadata where decisions.md says, then at RFC 8414’s address for an issuer with a path', () => {
    expect(metadataUrls('https://tenant.auth0.com/')).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
    expect(metadataUrls('https://kc.example/realms/sales')).toEqual([
      'https://kc.example/realms/sales/.well-known/oauth-authorization-server',
      'https://kc.example/realms/sales/.well-known/openid-configuration',
      'https://kc.example/.well-known/oauth-authorization-server/realms/sales',
    ]);
  });
});
