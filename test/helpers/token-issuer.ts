/**
 * A hand-made issuer for the faults a well-behaved authorization server never produces: it signs
 * whatever a test asks (any algorithm, kid, type, claims, or none at all) with keys made here,
 * serves RFC 8414 metadata and a JWKS on a loopback port, counts every fetch, and can be told to
 * fail each endpoint: an error status, a reset connection, a body that is not JSON, one too large,
 * or no answer at all.
 */
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deferCleanup } from './cleanup.ts';

export type EndpointMode = 'ok' | 'error' | 'reset' | 'garbage' | 'huge' | 'hang';

type Alg = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';

interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export interface SignOptions {
  /** @default 'RS256' */
  alg?: Alg;
  /** A published key's kid (default: the one for `alg`), or an unpublished one's. */
  kid?: string;
  /** @default 'at+jwt'; null leaves the header without `typ` */
  typ?: string | null;
  /** Sign with a key that is not published, under the kid given (an impostor). */
  unpublished?: boolean;
}

export interface TokenIssuer {
  issuer: string;
  jwksUrl: string;
  audience: string;
  fetches: { metadata: number; jwks: number };
  mode: { metadata: EndpointMode; jwks: EndpointMode };
  /** Standard valid claims for `sub`: iss, aud, iat, exp in an hour, a fresh jti; `claims` override. */
  claims(sub: string, claims?: JWTPayload): JWTPayload;
  sign(payload: JWTPayload, options?: SignOptions): Promise<string>;
  /** The public key, as PEM, of the RS256 key: the secret of the HMAC confusion attack. */
  publicPem(): string;
  /** Publishes a new RS256 key and returns its kid (a rotation). */
  rotate(): Promise<string>;
  close(): Promise<void>;
}

async function makeKey(kid: string, alg: Alg): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519', extractable: true } : { extractable: true });
  // Published without `alg`, as many issuers do: a key is then chosen by its type and kid.
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

/** `path`: the issuer's path (`https://host/tenant`), as Keycloak, Okta and Entra ID issuers have. */
export async function startTokenIssuer(options: { audience: string; path?: string }): Promise<TokenIssuer> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = origin + (options.path ?? '');
  const published: SigningKey[] = [
    await makeKey('rs-1', 'RS256'),
    await makeKey('ps-1', 'PS256'),
    await makeKey('es-1', 'ES256'),
    await makeKey('ed-1', 'EdDSA'),
  ];
  const impostors = new Map<Alg, SigningKey>();
  const fetches = { metadata: 0, jwks: 0 };
  const mode: TokenIssuer['mode'] = { metadata: 'ok', jwks: 'ok' };
  let rotations = 0;

  const answer = (res: http.ServerResponse, endpointMode: EndpointMode, body: unknown) => {
    switch (endpointMode) {
      case 'ok':
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        return;
      case 'error':
        res.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable');
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json</html>');
        return;
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"keys":[],"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`);
        return;
      case 'hang':
        return; // the connection stays open, unanswered, until the client gives up or we close
    }
  };

  server.on('request', (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    // RFC 8414 §3.1's own address only: for an issuer with a path, the well-known segment comes first.
    if (path === `/.well-known/oauth-authorization-server${options.path ?? ''}`) {
      fetches.metadata++;
      answer(res, mode.metadata, { issuer, jwks_uri: `${origin}/jwks`, token_endpoint: `${origin}/token`, response_types_supported: ['code'] });
      return;
    }
    if (path === '/jwks') {
      fetches.jwks++;
      answer(res, mode.jwks, { keys: published.map((k) => k.publicJwk) });
      return;
    }
    res.writeHead(404).end();
  });

  const keyFor = async (alg: Alg, kid: string | undefined, unpublished: boolean): Promise<SigningKey> => {
    if (unpublished) {
      let impostor = impostors.get(alg);
      if (!impostor) impostors.set(alg, (impostor = await makeKey('impostor', alg)));
      return { ...impostor, kid: kid ?? impostor.kid };
    }
    const key = kid ? published.find((k) => k.kid === kid) : published.find((k) => k.alg === alg);
    if (!key) throw new Error(`no published key ${kid ?? alg}`);
    return key;
  };

  const tokenIssuer: TokenIssuer = {
    issuer,
    jwksUrl: `${origin}/jwks`,
    audience: options.audience,
    fetches,
    mode,
    claims(sub, claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      return { iss: issuer, aud: options.audience, sub, iat: now, exp: now + 3600, jti: crypto.randomUUID(), ...claims };
    },
    async sign(payload, { alg = 'RS256', kid, typ = 'at+jwt', unpublished = false } = {}) {
      const key = await keyFor(alg, kid, unpublished);
      const header = { alg, kid: key.kid, ...(typ === null ? {} : { typ }) };
      return new SignJWT(payload).setProtectedHeader(header).sign(key.privateKey);
    },
    publicPem: () => published[0]!.publicPem,
    async rotate() {
      const key = await makeKey(`rs-rotated-${++rotations}`, 'RS256');
      published.push(key);
      return key.kid;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  deferCleanup(() => tokenIssuer.close());
  return tokenIssuer;
}
