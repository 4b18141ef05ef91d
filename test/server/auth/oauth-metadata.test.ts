import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

const PUBLIC_URL = 'https://prospecta.example';
const ISSUER = 'https://login.example/realms/prospecta';

describe('protected-resource metadata (RFC 9728) with an issuer', () => {
  let app: TestApp;
  beforeAll(async () => {
    // The issuer is never contacted here: nothing in this file presents a token.
    app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: ISSUER });
  });
  afterAll(() => app.close());

  it('is served at both well-known addresses, for the resource {PUBLIC_URL}/mcp', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/v1/.well-known/oauth-protected-resource']) {
      const res = await app.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
      expect(res.body).toEqual({
        resource: `${PUBLIC_URL}/mcp`,
        authorization_servers: [ISSUER],
        scopes_supported: [...SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'prospecta',
        resource_documentation: `${PUBLIC_URL}/openapi.json`,
      });
      expect(res.body.scopes_supported).toHaveLength(7);
    }
  });

  it('every 401 and 403 names it in WWW-Authenticate, after the realm', async () => {
    const metadata = `resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`;
    const none = await app.request('GET', '/v1/api/credits');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(`Bearer realm="prospecta", ${metadata}`);

    const bad = await app.request('GET', '/v1/api/credits', { key: 'service_live_' + 'A'.repeat(40) });
    expect(bad.headers.get('www-authenticate')).toBe(`Bearer realm="prospecta", error="invalid_token", ${metadata}`);

    const { workspaceId } = await app.workspace();
    const { apiKey } = await app.services.keys.create(workspaceId, ['outreach:read']);
    const scoped = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(scoped.status).toBe(403);
    expect(scoped.headers.get('www-authenticate')).toBe(
      `Bearer realm="prospecta", error="insufficient_scope", scope="credits:read", ${metadata}`,
    );
  });

  it('answers only GET', async () => {
    const res = await app.request('POST', '/.well-known/oauth-protected-resource', { body: {} });
    expect(res.status).toBe(405);
    expect(res.body.error).toBe('method_not_allowed');
  });
});

describe('protected-resource metadata without an issuer', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PUBLIC_URL });
  });
  afterAll(() => app.close());

  it('leaves authorization_servers out: only API keys are accepted', async () => {
    const res = await app.request('GET', '/.well-known/oauth-protected-resource');
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('authorization_servers');
    expect(res.body.resource).toBe(`${PUBLIC_URL}/mcp`);
  });

  it('a JWT is then just a wrong API key', async () => {
    const res = await app.request('GET', '/v1/api/credits', { key: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('The API key is invalid or has been revoked.');
  });
});
