/**
 * Every way a token can be wrong, and every way its issuer can fail, with tokens signed here
 * (test/helpers/token-issuer.ts) since a well-behaved authorization server would not make them.
 * Each answer is 401 `unauthorized` with `error="invalid_token"`, never a 500; the log says why
 * with a reason code and never holds the token.
 */
import { SignJWT, type JWTPayload } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { captureLog, type CapturedLog } from '../../helpers/log-capture.ts';
import { startTokenIssuer, type EndpointMode, type TokenIssuer } from '../../helpers/token-issuer.ts';

const PUBLIC_URL = 'https://prospecta.example';
const AUDIENCE = `${PUBLIC_URL}/mcp`;
const METADATA = `resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** Moves the clock that jose's key cache and our caches read (Date.now), not the one claims are checked with. */
function shiftClock(): { by(ms: number): void } {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
  return { by: (ms) => void (offset += ms) };
}

async function credits(app: TestApp, key: string) {
  return app.request('GET', '/v1/api/credits', { key });
}

function expectInvalidToken(res: { status: number; body: any; headers: Headers }, what: string) {
  expect(res.status, what).toBe(401);
  expect(res.body, what).toEqual({ error: 'unauthorized', message: expect.any(String) });
  expect(res.headers.get('www-authenticate'), what).toBe(`Bearer realm="prospecta", error="invalid_token", ${METADATA}`);
}

const refusals = (log: CapturedLog) => log.lines().filter((l) => l.msg === 'access token refused').map((l) => l.reason);

describe('tokens', () => {
  let issuer: TokenIssuer;
  let app: TestApp;
  const logs = captureLog();
  const presented: string[] = [];

  beforeAll(async () => {
    issuer = await startTokenIssuer({ audience: AUDIENCE, path: '/tenant' });
    app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: issuer.issuer }, { log: logs.log });
  });
  afterAll(() => app.close());
  afterEach(() => void vi.restoreAllMocks());

  const sign = async (payload: JWTPayload, options?: Parameters<TokenIssuer['sign']>[1]) => {
    const token = await issuer.sign(payload, options);
    presented.push(token);
    return token;
  };

  it('are accepted signed with RS256, PS256, ES256 and EdDSA, typed at+jwt, JWT or not at all', async () => {
    for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA'] as const) {
      const res = await credits(app, await sign(issuer.claims('many-algs', { scope: 'credits:read' }), { alg }));
      expect(res.status, alg).toBe(200);
    }
    for (const typ of ['JWT', 'application/at+jwt', null]) {
      expect((await credits(app, await sign(issuer.claims('many-algs', { scope: 'credits:read' }), { typ }))).status, String(typ)).toBe(200);
    }
    // Discovery went to RFC 8414's address for an issuer with a path, after the two decisions.md names.
    expect(issuer.fetches).toEqual({ metadata: 1, jwks: 1 });
  });

  it('take scopes from `scope`, from `scp` as an array (Okta) or a string (Entra ID), ignoring unknown ones', async () => {
    const cases: Array<[JWTPayload, number]> = [
      [{ scope: 'openid credits:read profile' }, 200],
      [{ scp: ['credits:read', 'offline_access'] }, 200],
      [{ scp: 'email credits:read' }, 200],
      [{ scope: 'search:write' }, 403],
      [{ scp: ['credits:write', 'credits'] }, 403],
      [{}, 403],
    ];
    for (const [claims, status] of cases) {
      const res = await credits(app, await sign(issuer.claims('scoped', claims)));
      expect(res.status, JSON.stringify(claims)).toBe(status);
      if (status === 403) expect(res.body.error).toBe('insufficient_scope');
    }
  });

  it('leave 60 s of leeway on exp and nbf, no more', async () => {
    const scope = 'credits:read';
    expect((await credits(app, await sign(issuer.claims('leeway', { scope, exp: now() - 30 })))).status).toBe(200);
    expect((await credits(app, await sign(issuer.claims('leeway', { scope, nbf: now() + 30 })))).status).toBe(200);
    expectInvalidToken(await credits(app, await sign(issuer.claims('leeway', { scope, exp: now() - 90 }))), 'expired');
    expectInvalidToken(await credits(app, await sign(issuer.claims('leeway', { scope, nbf: now() + 90 }))), 'not yet valid');
  });

  it('are refused with 401 invalid_token for every fault, with the reason in the log', async () => {
    const valid = issuer.claims('faulty', { scope: 'credits:read' });
    const [header, payload] = (await sign(valid)).split('.');
    const faults: Array<[string, string | Promise<string>, string]> = [
      ['alg none', `${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(valid)}.`, 'alg_not_allowed'],
      ['alg none, with a signature', `${b64({ alg: 'none' })}.${b64(valid)}.c2ln`, 'alg_not_allowed'],
      [
        'HS256 with the public key as the secret',
        new SignJWT(valid).setProtectedHeader({ alg: 'HS256', kid: 'rs-1', typ: 'at+jwt' }).sign(new TextEncoder().encode(issuer.publicPem())),
        'alg_not_allowed',
      ],
      ['RS384 (not accepted)', `${b64({ alg: 'RS384', kid: 'rs-1' })}.${payload}.c2ln`, 'alg_not_allowed'],
      ['a key the issuer does not publish', sign(valid, { unpublished: true }), 'unknown_kid'],
      ['another key under a published kid', sign(valid, { unpublished: true, kid: 'rs-1' }), 'bad_signature'],
      ['a payload swapped under a valid signature', `${header}.${b64({ ...valid, scope: SCOPE_ALL })}.${(await sign(valid)).split('.')[2]}`, 'bad_signature'],
      ['expired', sign({ ...valid, exp: now() - 3600 }), 'expired'],
      ['not yet valid', sign({ ...valid, nbf: now() + 3600 }), 'not_yet_valid'],
      ['another issuer', sign({ ...valid, iss: 'https://evil.example' }), 'wrong_issuer'],
      ['the issuer with a trailing slash', sign({ ...valid, iss: `${issuer.issuer}/` }), 'wrong_issuer'],
      ['another audience', sign({ ...valid, aud: 'https://other.example/api' }), 'wrong_audience'],
      ['no audience', sign({ ...valid, aud: undefined }), 'wrong_audience'],
      ['no sub', sign({ ...valid, sub: undefined }), 'claims_invalid'],
      ['an empty sub', sign({ ...valid, sub: '' }), 'claims_invalid'],
      ['no exp', sign({ ...valid, exp: undefined }), 'claims_invalid'],
      ['a logout token (typ)', sign(valid, { typ: 'logout+jwt' }), 'wrong_type'],
      ['two parts', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0', 'malformed'],
      ['five parts (a JWE)', `${header}.a.b.c.d`, 'malformed'],
      ['a header that is not JSON', `bm90IGpzb24.${payload}.c2ln`, 'malformed'],
      ['a payload that is not JSON', `${header}.bm90IGpzb24.c2ln`, 'malformed'],
      ['not base64url', `${header}.${payload}.***`, 'malformed'],
      ['far too long', `${header}.${'A'.repeat(9000)}.c2ln`, 'malformed'],
    ];
    const before = issuer.fetches.jwks;
    for (const [what, token, reason] of faults) {
      const value = await token;
      presented.push(value);
      const logged = refusals(logs).length;
      expectInvalidToken(await credits(app, value), what);
      expect(refusals(logs).slice(logged), what).toEqual([reason]);
    }
    // None of them made us fetch the keys again (the cooldown after the last fetch holds).
    expect(issuer.fetches.jwks).toBe(before);
  });

  it('a malformed Authorization header is 401 too', async () => {
    for (const value of ['Bearer', 'Bearer a b', 'Token abc', 'Bearer  ', `Basic ${b64('u:p')}`]) {
      const res = await app.request('GET', '/v1/api/credits', { headers: { Authorization: value } });
      expect(res.status, value).toBe(401);
      expect(res.body.error).toBe('unauthorized');
    }
  });

  it('an unknown kid refetches the key set once per cooldown, so a rotated key is picked up and junk costs nothing', async () => {
    const clock = shiftClock();
    const stranger = issuer.claims('rotation', { scope: 'credits:read' });
    const fetched = issuer.fetches.jwks;
    for (let i = 0; i < 10; i++) expectInvalidToken(await credits(app, await sign(stranger, { unpublished: true })), 'unknown kid');
    expect(issuer.fetches.jwks).toBe(fetched); // within the cooldown of the last fetch

    clock.by(31_000);
    for (let i = 0; i < 10; i++) expectInvalidToken(await credits(app, await sign(stranger, { unpublished: true })), 'unknown kid');
    expect(issuer.fetches.jwks).toBe(fetched + 1); // one refetch, then the cooldown again

    const kid = await issuer.rotate();
    clock.by(31_000);
    for (let i = 0; i < 5; i++) expect((await credits(app, await sign(issuer.claims('rotation', { scope: 'credits:read' }), { kid }))).status).toBe(200);
    expect(issuer.fetches.jwks).toBe(fetched + 2);
  });

  it('a token remembered as verified is refused once it expires', async () => {
    const token = await sign(issuer.claims('short-lived', { scope: 'credits:read', exp: now() + 120 }));
    expect((await credits(app, token)).status).toBe(200);
    expect((await credits(app, token)).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 200_000); // past exp and its 60 s of leeway
      expectInvalidToken(await credits(app, token), 'expired after it was cached');
      expect(refusals(logs).at(-1)).toBe('expired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('never put the token in the log', () => {
    expect(presented.length).toBeGreaterThan(30);
    const text = logs.text();
    for (const token of presented) {
      for (const part of token.split('.').filter((p) => p.length > 8)) expect(text).not.toContain(part);
    }
    expect(text).not.toMatch(/"(sub|subject|token|authorization)":/i);
  });
});

const SCOPE_ALL = 'catalog:read search:write enrich:write research:write outreach:read outreach:write credits:read';

describe('an issuer that fails', () => {
  afterEach(() => void vi.restoreAllMocks());

  async function setUp(configured: (issuer: TokenIssuer) => string = (issuer) => issuer.issuer) {
    const issuer = await startTokenIssuer({ audience: AUDIENCE });
    const logs = captureLog();
    const iss = configured(issuer);
    const app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: iss, OAUTH_FETCH_TIMEOUT_MS: '300' }, { log: logs.log });
    const { apiKey } = await app.workspace();
    const token = () => issuer.sign(issuer.claims('outage', { iss, scope: 'credits:read' }));
    return { issuer, logs, app, apiKey, token };
  }

  for (const mode of ['error', 'reset', 'garbage', 'huge', 'hang'] satisfies EndpointMode[]) {
    it(`key set ${mode}: 401 with a logged reason, no fetch per request, API keys unaffected, then recovery`, async () => {
      const { issuer, logs, app, apiKey, token } = await setUp();
      issuer.mode.jwks = mode;
      try {
        const first = credits(app, await token());
        // An API key is answered while the token waits on the issuer.
        expect((await credits(app, apiKey)).status).toBe(200);
        expectInvalidToken(await first, mode);
        expect(refusals(logs)).toEqual(['keys_unavailable']);
        expect(logs.lines().find((l) => l.msg === 'oauth key set unavailable')).toMatchObject({ level: 40, reason: 'keys_unavailable' });

        for (let i = 0; i < 5; i++) expectInvalidToken(await credits(app, await token()), `${mode}, again`);
        expect(issuer.fetches.jwks).toBe(1);
        expect((await credits(app, apiKey)).status).toBe(200);

        issuer.mode.jwks = 'ok';
        const recovered = await eventually(async () => (await credits(app, await token())).status === 200 && issuer.fetches.jwks, {
          message: 'a token to be accepted once the key set answers',
        });
        expect(recovered).toBeLessThanOrEqual(3); // retried after a backoff, not per request
      } finally {
        await app.close();
      }
    });
  }

  it('metadata unreachable: 401 issuer_unavailable, retried after a backoff, API keys unaffected', async () => {
    const { issuer, logs, app, apiKey, token } = await setUp();
    issuer.mode.metadata = 'hang';
    try {
      for (let i = 0; i < 4; i++) expectInvalidToken(await credits(app, await token()), 'metadata down');
      expect(new Set(refusals(logs))).toEqual(new Set(['issuer_unavailable']));
      expect(issuer.fetches.metadata).toBe(1);
      expect(logs.lines().find((l) => l.msg === 'oauth issuer metadata unavailable')).toMatchObject({ level: 40 });
      expect((await credits(app, apiKey)).status).toBe(200);

      issuer.mode.metadata = 'ok';
      await eventually(async () => expect((await credits(app, await token())).status).toBe(200), { message: 'discovery to be retried' });
      expect(issuer.fetches.metadata).toBeLessThanOrEqual(3);
    } finally {
      await app.close();
    }
  });

  it('metadata naming another issuer is not used (RFC 8414 §3.3)', async () => {
    // OAUTH_ISSUER with a trailing slash: the document found says the issuer has none.
    const { issuer, logs, app, token } = await setUp((i) => `${i.issuer}/`);
    try {
      expectInvalidToken(await credits(app, await token()), 'foreign metadata');
      expect(refusals(logs)).toEqual(['issuer_unavailable']);
      const logged = logs.lines().find((l) => l.msg === 'oauth issuer metadata unavailable');
      expect(JSON.stringify(logged?.problems)).toContain('not OAUTH_ISSUER');
      expect(issuer.fetches).toEqual({ metadata: 1, jwks: 0 });
    } finally {
      await app.close();
    }
  });

  it('with OAUTH_JWKS_URL, no metadata is read', async () => {
    const issuer = await startTokenIssuer({ audience: AUDIENCE });
    issuer.mode.metadata = 'error';
    const app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: issuer.issuer, OAUTH_JWKS_URL: issuer.jwksUrl });
    try {
      expect((await credits(app, await issuer.sign(issuer.claims('direct', { scope: 'credits:read' })))).status).toBe(200);
      expect(issuer.fetches).toEqual({ metadata: 0, jwks: 1 });
    } finally {
      await app.close();
    }
  });

  it('keys fetched earlier keep verifying while the key set is down past its cache age', async () => {
    const { issuer, logs, app, token } = await setUp();
    try {
      expect((await credits(app, await token())).status).toBe(200);
      issuer.mode.jwks = 'error';
      const clock = shiftClock();
      clock.by(11 * 60_000);
      expect((await credits(app, await token())).status).toBe(200);
      expect(issuer.fetches.jwks).toBe(2);
      expect(logs.lines().some((l) => l.msg === 'oauth key set unavailable')).toBe(true);
      // Backing off: the next token verifies with the same keys without a fetch.
      expect((await credits(app, await token())).status).toBe(200);
      expect(issuer.fetches.jwks).toBe(2);
    } finally {
      await app.close();
    }
  });
});
