/**
 * An MCP client signing in through its own OAuth flow, end to end: the official SDK client, given
 * only the server's URL, is refused with 401, reads the protected-resource metadata, finds the
 * authorization server (a real oidc-provider), registers itself, runs the authorization code flow
 * with PKCE (the test answers the provider's login and consent pages, as a person would), gets a
 * JWT access token for `{PUBLIC_URL}/mcp`, and then lists and calls tools as a new subject's
 * workspace, charged like any caller.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolName, tools } from '../../../server/tools/tools.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { freePort, startTestApp, type TestApp } from '../../helpers/app.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../../helpers/authorization-server.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';
const acme = makeCnpj('11222333');

let app: TestApp;
let as: AuthorizationServer;
let publicUrl: string;

/** What an MCP client keeps between the redirect and the callback; in memory here. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'prospecta MCP test',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    } as OAuthClientMetadata;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/**
 * A person at the browser: follows the authorization server's redirects with its cookies, signs
 * in as `account` on the login page, accepts the consent page, and returns the code it was sent
 * back to the client's redirect URI with.
 */
async function signIn(authorizationUrl: URL, account: string): Promise<string> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl.href;
  let form: URLSearchParams | undefined;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form,
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      const target = new URL(location, url);
      if (target.href.startsWith(REDIRECT)) {
        const code = target.searchParams.get('code');
        if (!code) throw new Error(`authorization refused: ${target.search}`);
        return code;
      }
      url = target.href;
      form = undefined;
      continue;
    }
    const page = await res.text();
    if (res.status !== 200 || !/\/interaction\//.test(url)) throw new Error(`unexpected page ${res.status} at ${url}: ${page.slice(0, 200)}`);
    // The provider's own pages: a login form, then a consent form, each posted back to the same URL.
    form = new URLSearchParams(/name="login"/.test(page) ? { prompt: 'login', login: account, password: 'any' } : { prompt: 'consent' });
  }
  throw new Error('too many redirects');
}

const connect = async (provider: OAuthClientProvider) => {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
};

beforeAll(async () => {
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  as = await startAuthorizationServer({ resource: `${publicUrl}/mcp`, clients: { reporter: {} } });
  app = await startTestApp({ PUBLIC_URL: publicUrl, OAUTH_ISSUER: as.issuer }, { port });
  await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(acme));
});
afterAll(() => app.close());

describe('an MCP client signing in with OAuth', () => {
  it('discovers the issuer, registers, runs the code flow with PKCE, then uses the tools as its own workspace', async () => {
    const provider = new MemoryProvider();
    // No credential: the client is sent to sign in.
    const first = new Client({ name: 'oauth-test', version: '1.0.0' });
    const firstTransport = new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { authProvider: provider });
    await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toBeTruthy(); // registered dynamically
    const authorizationUrl = provider.authorizationUrl!;
    expect(authorizationUrl.origin).toBe(as.issuer);
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${publicUrl}/mcp`);

    const code = await signIn(authorizationUrl, 'maria');
    await firstTransport.finishAuth(code);
    expect(provider.saved?.access_token.split('.')).toHaveLength(3); // a JWT

    const { client } = await connect(provider);
    try {
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      // Granted every scope: every tool the agent does not keep to itself.
      expect(listed).toEqual([...tools.keys()].sort());
      expect(listed).toContain(toolName('lookupCnpjBatch'));

      const credits = (await client.callTool({ name: 'get_credits', arguments: {} })) as CallToolResult;
      expect(credits.structuredContent).toMatchObject({ balance: 500, plan: { name: 'trial' } });
      const found = (await client.callTool({ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } })) as CallToolResult;
      expect(found.isError).toBeFalsy();
      expect((found.structuredContent as { results: unknown[] }).results).toHaveLength(1);
      const after = (await client.callTool({ name: 'get_credits', arguments: {} })) as CallToolResult;
      expect(after.structuredContent).toMatchObject({ balance: 499 });
      expect((after.structuredContent as { movements: unknown[] }).movements[0]).toMatchObject({ amount: -1, operation: 'lookupCnpjBatch' });
    } finally {
      await client.close();
    }
  });

  it('a token lists only the tools of its scopes, and a removed member is refused at once', async () => {
    const token = await as.token('reporter', ['credits:read']);
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${publicUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    try {
      const listed = (await client.listTools()).tools;
      expect(listed.map((t) => t.name)).toContain('get_credits');
      expect(listed.every((t) => ['credits:read', null].includes(tools.get(t.name)!.scope))).toBe(true);
    } finally {
      await client.close();
    }

    // Signed up by its first request; the operator removes it.
    const member = await app.services.members.find(as.issuer, 'reporter');
    expect(await app.services.members.remove(as.issuer, 'reporter', member!.workspaceId)).toBe(true);
    const refused = await fetch(`${publicUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'no_workspace' });
  });
});
