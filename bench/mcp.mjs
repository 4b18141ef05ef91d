// npm run bench:mcp — the same CNPJ batch and credits read over HTTP and as MCP tools/call, with
// an API key and with an OAuth access token (a JWT from a loopback issuer), in one run. The
// server is dist/server.mjs in its own process on the demo store; autocannon drives each case.
import autocannon from 'autocannon';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { cli, freePort, startInstance } from './lib.mjs';

const CONNECTIONS = 50;
const DURATION = 8;
const WARM_UP = 2;
const BATCH = 100;
const SCOPES = 'catalog:read search:write enrich:write research:write outreach:read outreach:write credits:read';

function run(request, duration = DURATION) {
  return new Promise((resolve, reject) => {
    autocannon({ ...request, connections: CONNECTIONS, duration }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/** A loopback authorization server as far as a resource server sees one: its metadata and its keys. */
async function startIssuer() {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const server = createServer((req, res) => {
    const body =
      req.url === '/.well-known/oauth-authorization-server'
        ? { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token`, authorization_endpoint: `${issuer}/authorize` }
        : req.url === '/jwks'
          ? { keys: [jwk] }
          : null;
    res.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const token = (audience, subject) =>
    new SignJWT({ scope: SCOPES, client_id: 'bench' })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench', typ: 'at+jwt' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
  return { issuer, token, close: () => new Promise((resolve) => server.close(resolve)) };
}

const work = await mkdtemp(path.join(tmpdir(), 'prospecta-bench-mcp-'));
const issuer = await startIssuer();
let server;
const rows = [];
/** Each case's figures under a short name: `HTTP batch, JWT`. */
const byCase = new Map();
try {
  // The demo registry's companies to look up, and one funded workspace for the API key and the
  // token's subject alike, so both paths do the same work and never run out of credits.
  server = await startInstance(path.join(work, 'data'), { HOST: '127.0.0.1', OAUTH_ISSUER: issuer.issuer }, { demo: true });
  const { url, apiKey } = server;
  await cli(['member', 'add', '--workspace', server.workspaceId, '--subject', 'bench-user', '--issuer', issuer.issuer], server.env);
  const token = await issuer.token(`${url}/mcp`, 'bench-user');

  // CNPJs the demo registry holds, a few per state.
  const cnpjs = [];
  for (const state of ['SP', 'RJ', 'MG', 'RS', 'PR', 'SC', 'BA', 'PE', 'CE', 'GO', 'DF', 'ES', 'AM', 'PA']) {
    cnpjs.push(...(await server.call('POST', '/companies/search', { state, limit: 20 })).results.map((c) => c.cnpj));
  }
  const batch = cnpjs.slice(0, BATCH);

  const json = { 'Content-Type': 'application/json' };
  const mcpHeaders = { ...json, Accept: 'application/json, text/event-stream' };
  const toolCall = (name, args) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const cases = (credential, bearer) => [
    { key: `HTTP batch, ${credential}`, name: `HTTP POST cnpj/batch (${batch.length} CNPJs), ${credential}`, method: 'POST', url: `${url}/v1/api/companies/cnpj/batch`, headers: { ...json, Authorization: bearer }, body: JSON.stringify({ cnpjs: batch }) },
    { key: `MCP batch, ${credential}`, name: `MCP lookup_cnpj_batch (${batch.length} CNPJs), ${credential}`, method: 'POST', url: `${url}/mcp`, headers: { ...mcpHeaders, Authorization: bearer }, body: toolCall('lookup_cnpj_batch', { cnpjs: batch }) },
    { key: `HTTP credits, ${credential}`, name: `HTTP GET credits, ${credential}`, method: 'GET', url: `${url}/v1/api/credits`, headers: { Authorization: bearer } },
    { key: `MCP credits, ${credential}`, name: `MCP get_credits, ${credential}`, method: 'POST', url: `${url}/mcp`, headers: { ...mcpHeaders, Authorization: bearer }, body: toolCall('get_credits', {}) },
  ];
  // Credits reads first: every batch adds a ledger movement, and the read shows the latest 50.
  const all = [...cases('API key', `Bearer ${apiKey}`), ...cases('JWT', `Bearer ${token}`)];
  const ordered = [...all.filter((c) => c.key.includes('credits')), ...all.filter((c) => c.key.includes('batch'))];
  for (const { key, name, ...request } of ordered) {
    // Each case answers correctly before it is timed.
    const check = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
    const text = await check.text();
    if (!check.ok || text.includes('"isError":true')) throw new Error(`${name}: ${check.status} ${text.slice(0, 300)}`);
    await run(request, WARM_UP);
    const r = await run(request);
    const row = { name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts };
    rows.push(row);
    byCase.set(key, row);
  }
} finally {
  await server?.stop();
  await issuer.close();
  await rm(work, { recursive: true, force: true });
}

console.log(`\nautocannon: ${CONNECTIONS} connections, ${DURATION} s each, after ${WARM_UP} s of warm-up\n`);
console.table(rows);
const ratio = (a, b) => `${((byCase.get(a).rps / byCase.get(b).rps) * 100).toFixed(1)}%`;
for (const credential of ['API key', 'JWT']) {
  for (const what of ['batch', 'credits']) {
    console.log(`MCP / HTTP requests/s, ${what}, ${credential}: ${ratio(`MCP ${what}, ${credential}`, `HTTP ${what}, ${credential}`)} (target >= 85%)`);
  }
}
for (const binding of ['HTTP', 'MCP']) {
  for (const what of ['batch', 'credits']) {
    console.log(`JWT / API key requests/s, ${binding} ${what}: ${ratio(`${binding} ${what}, JWT`, `${binding} ${what}, API key`)} (target >= 90%)`);
  }
}
if (rows.some((r) => r.errors)) console.log('WARNING: some cases had non-2xx or errored responses');
