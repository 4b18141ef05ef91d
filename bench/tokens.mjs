// npm run bench:tokens — what an OAuth access token costs next to an API key.
// 1. jose's jwtVerify alone with a warm key set (RS256, ES256, EdDSA), and the SHA-256 that a
//    hit in the server's per-token cache costs instead.
// 2. GET /v1/api/credits on the built server with autocannon (100 connections, DURATION s each):
//    an API key; one JWT sent again and again (the per-token cache answers after the first); and
//    a rotation through more distinct JWTs than the cache holds (every request verifies).
// The issuer (metadata and JWKS) is served by this process on loopback; it is idle once fetched.
import autocannon from 'autocannon';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { startInstance } from './lib.mjs';

const CONNECTIONS = 100;
const DURATION = Number(process.env.DURATION ?? 10);
const PUBLIC_URL = 'https://prospecta.bench';
const AUDIENCE = `${PUBLIC_URL}/mcp`;
/** More than the server's cache of verified tokens (10,000), so a rotation never hits it. */
const DISTINCT_TOKENS = 12_000;

const keys = {};
for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  const pair = await generateKeyPair(alg, { extractable: true });
  keys[alg] = { ...pair, jwk: { ...(await exportJWK(pair.publicKey)), kid: alg, use: 'sig' } };
}
const jwks = { keys: Object.values(keys).map((k) => k.jwk) };

const issuerServer = http.createServer((req, res) => {
  const body = req.url === '/jwks' ? jwks : { issuer, jwks_uri: `${issuer}/jwks` };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
});
await new Promise((resolve) => issuerServer.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${issuerServer.address().port}`;

const sign = (alg, sub = 'bench-subject') =>
  new SignJWT({ scope: 'credits:read', jti: crypto.randomUUID() })
    .setProtectedHeader({ alg, kid: alg, typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience(AUDIENCE)
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(keys[alg].privateKey);

// 1. Verification alone.
const micro = [];
const keySet = createLocalJWKSet(jwks);
const options = { issuer, audience: AUDIENCE, algorithms: ['RS256', 'ES256', 'EdDSA'], clockTolerance: 60 };
for (const alg of ['RS256', 'ES256', 'EdDSA']) {
  const token = await sign(alg);
  for (let i = 0; i < 500; i++) await jwtVerify(token, keySet, options); // warm-up
  const n = 5000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await jwtVerify(token, keySet, options);
  micro.push({ what: `jwtVerify ${alg}`, 'µs per token': Number(process.hrtime.bigint() - started) / 1e3 / n });
}
{
  const token = await sign('RS256');
  const n = 100_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) createHash('sha256').update(token).digest('base64url');
  micro.push({ what: 'SHA-256 of the token (a cache hit)', 'µs per token': Number(process.hrtime.bigint() - started) / 1e3 / n });
}
console.log('\nToken verification in one thread, warm key set:');
console.table(micro.map((m) => ({ ...m, 'µs per token': Math.round(m['µs per token'] * 10) / 10 })));

// 2. Over HTTP.
function run(url, requests) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: DURATION, requests }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}
const summary = (name, r) => ({ name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts });
const fixed = (bearer) => [{ method: 'GET', headers: { authorization: `Bearer ${bearer}` } }];

const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-tokens-'));
const results = [];
try {
  process.stderr.write(`signing ${DISTINCT_TOKENS} distinct RS256 tokens…\n`);
  const distinct = [];
  for (let i = 0; i < DISTINCT_TOKENS; i++) distinct.push(await sign('RS256'));
  const instance = await startInstance(path.join(work, 'data'), { PUBLIC_URL, OAUTH_ISSUER: issuer });
  const url = `${instance.url}/v1/api/credits`;
  try {
    const one = await sign('RS256');
    // The first token signs its subject up (a workspace on the trial plan); the rest find it.
    const first = await fetch(url, { headers: { authorization: `Bearer ${one}` } });
    if (first.status !== 200) throw new Error(`the token was refused: ${first.status} ${await first.text()}`);

    await run(url, fixed(instance.apiKey)); // warm-up
    results.push(summary('API key', await run(url, fixed(instance.apiKey))));
    results.push(summary('one JWT, repeated (cache hits)', await run(url, fixed(one))));
    let next = 0;
    const rotating = [{ method: 'GET', setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${distinct[next++ % distinct.length]}` } }) }];
    results.push(summary(`${DISTINCT_TOKENS} JWTs in turn (every one verified)`, await run(url, rotating)));
  } finally {
    await instance.stop();
  }
} finally {
  issuerServer.close();
  await rm(work, { recursive: true, force: true });
}

console.log(`\nGET /v1/api/credits, autocannon: ${CONNECTIONS} connections, ${DURATION} s each`);
console.table(results);
const [key, hit, miss] = results;
console.log(`JWT (cached) / API key requests/s: ${((hit.rps / key.rps) * 100).toFixed(1)}%`);
console.log(`JWT (verified every time) / API key requests/s: ${((miss.rps / key.rps) * 100).toFixed(1)}%`);
