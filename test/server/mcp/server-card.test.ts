/**
 * The MCP server card (SEP-2127) at /.well-known/mcp/server-card.json: the `/mcp` address, both
 * revisions and the credentials it takes, agreeing with what the server itself answers (the
 * protected-resource metadata, `server/discover`, an API key's `tools/list`).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

const PUBLIC_URL = 'https://api.prospecta.example';
const ISSUER = 'https://login.example/realms/prospecta';
const CARD = '/.well-known/mcp/server-card.json';

describe('the server card with OAuth', () => {
  let app: TestApp;
  let client: Client;
  beforeAll(async () => {
    // The issuer is never contacted: the client presents an API key.
    app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: ISSUER });
    const { apiKey } = await app.workspace();
    client = new Client({ name: 'prospecta-tests', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
  });
  afterAll(async () => {
    await client.close();
    await app.close();
  });

  it('names the server, its /mcp address, both revisions and both credentials, without one', async () => {
    const res = await app.request('GET', CARD);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const card = res.body;
    expect(card).toMatchObject({
      $schema: 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json',
      name: 'example.prospecta.api/prospecta',
      version: client.getServerVersion()!.version,
      title: 'prospecta',
      description: client.getInstructions(),
      websiteUrl: PUBLIC_URL,
      remotes: [
        {
          type: 'streamable-http',
          url: `${PUBLIC_URL}/mcp`,
          supportedProtocolVersions: ['2025-11-25', '2026-07-28'],
          headers: [{ name: 'Authorization', isRequired: true, isSecret: true, description: expect.stringMatching(/API key.*OAuth access token/) }],
          authentication: { required: true, schemes: ['bearer', 'oauth2'] },
        },
      ],
      capabilities: client.getServerCapabilities(),
    });
    // The OAuth side is the protected-resource metadata's, and names where that is.
    const metadataUrl = `${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp`;
    const metadata = (await app.request('GET', new URL(metadataUrl).pathname)).body;
    expect(card._meta['prospecta/oauth']).toEqual({ protectedResourceMetadata: metadataUrl, authorizationServers: metadata.authorization_servers, scopesSupported: metadata.scopes_supported });
    // The same URL a 401 of /mcp names.
    const refused = await fetch(`${app.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(refused.headers.get('www-authenticate')).toContain(`resource_metadata="${metadataUrl}"`);
  });

  it('lists the tools an API key lists, as tools/list describes them', async () => {
    const { tools } = await client.listTools();
    const card = (await app.request('GET', CARD)).body;
    expect(card.tools.map((tool: { name: string }) => tool.name)).toEqual(tools.map((tool) => tool.name));
    expect(card.tools).toEqual(JSON.parse(JSON.stringify(tools)));
  });
});

describe('the server card without OAuth', () => {
  it('offers the API key alone, and names a loopback server by its address', async () => {
    const app = await startTestApp({ PUBLIC_URL: 'http://127.0.0.1:8080' });
    try {
      const card = (await app.request('GET', CARD)).body;
      expect(card.name).toBe('127.0.0.1/prospecta');
      expect(card.remotes[0]).toMatchObject({ url: 'http://127.0.0.1:8080/mcp', authentication: { required: true, schemes: ['bearer'] } });
      expect(card.remotes[0].headers[0].description).not.toMatch(/OAuth/);
      expect(card._meta['prospecta/oauth']).not.toHaveProperty('authorizationServers');
    } finally {
      await app.close();
    }
  });
});
