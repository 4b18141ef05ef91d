/**
 * A real authorization server for the tests: oidc-provider 9 (the certified OpenID Provider for
 * Node, itself a Koa app) on a loopback port, issuing JWT access tokens (RFC 9068) for one
 * resource through its resource-indicators feature. Tests get tokens headlessly with the client
 * credentials grant, one client per subject (the token's `sub` is then the client id). Dynamic
 * client registration and PKCE (S256) are on too, for clients that run the authorization-code
 * flow themselves (an MCP client, the dashboard's sign-in), with `findAccount` answering any
 * login as that account (e-mail `<login>@example.com`) through the development login and consent
 * forms (`POST /interaction/<uid>` with `prompt=login&login=<name>`, then `prompt=consent`).
 */
import { generateKeyPair, exportJWK } from 'jose';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SCOPES } from '../../shared/operations/types.ts';
import { deferCleanup } from './cleanup.ts';

export interface TestClient {
  /** Claims added to every access token of this client (`email`, `name`). */
  claims?: Record<string, string>;
}

export interface AuthorizationServer {
  issuer: string;
  /** A client-credentials access token for `clientId`'s subject, with these scopes, for the resource. */
  token(clientId: string, scopes: readonly string[]): Promise<string>;
  /** Token endpoint requests answered so far. */
  readonly tokensIssued: number;
  close(): Promise<void>;
}

/** oidc-provider announces development defaults and Node 20 on the console; the tests know. */
async function quietly<T>(make: () => Promise<T>): Promise<T> {
  const { warn, info } = console;
  console.warn = console.info = () => {};
  try {
    return await make();
  } finally {
    Object.assign(console, { warn, info });
  }
}

export async function startAuthorizationServer(options: {
  resource: string;
  clients: Record<string, TestClient>;
  /** Clients of the authorization-code flow (the dashboard's sign-in), by id, with their redirect URIs; secret `<id>-secret`. */
  webClients?: Record<string, { redirectUris: string[] }>;
  accessTokenTtlSeconds?: number;
}): Promise<AuthorizationServer> {
  const { default: Provider } = await quietly(() => import('oidc-provider'));
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-rs256', use: 'sig', alg: 'RS256' };
  const ttl = options.accessTokenTtlSeconds ?? 600;
  const scope = SCOPES.join(' ');

  const provider = await quietly(async () =>
    new Provider(issuer, {
      jwks: { keys: [signingKey] },
      clients: Object.keys(options.clients).map((clientId): Record<string, unknown> => ({
        client_id: clientId,
        client_secret: `${clientId}-secret`,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope,
      })).concat(
        Object.entries(options.webClients ?? {}).map(([clientId, { redirectUris }]) => ({
          client_id: clientId,
          client_secret: `${clientId}-secret`,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          redirect_uris: redirectUris,
          scope: 'openid email profile',
        })),
      ),
      scopes: ['openid', 'offline_access', ...SCOPES],
      claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
      features: {
        clientCredentials: { enabled: true },
        registration: { enabled: true },
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) => {
            if (resource !== options.resource) throw new Error(`unknown resource ${resource}`);
            return { scope, audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: ttl };
          },
        },
      },
      pkce: { required: () => true },
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.com` }) }),
      extraTokenClaims: (_ctx: unknown, token: unknown) => {
        const clientId = (token as { clientId?: string }).clientId;
        const client = clientId ? options.clients[clientId] : undefined;
        return client?.claims ? { ...client.claims } : undefined;
      },
      ttl: { AccessToken: ttl, ClientCredentials: ttl, AuthorizationCode: 60, Grant: 600, Interaction: 600, Session: 600, IdToken: ttl, RefreshToken: 3600 },
    }),
  );
  let tokensIssued = 0;
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url?.startsWith('/token')) tokensIssued++;
    callback(req, res);
  });

  const as: AuthorizationServer = {
    issuer,
    get tokensIssued() {
      return tokensIssued;
    },
    async token(clientId, scopes) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: scopes.join(' '), resource: options.resource }),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  deferCleanup(() => as.close());
  return as;
}
