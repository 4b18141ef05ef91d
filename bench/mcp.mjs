// npm run bench:mcp — the same CNPJ batch and credits read over HTTP and as MCP tools/call, the
// latter as a 2025-11-25 client sends it (a bare JSON-RPC POST after its initialize) and as a
// 2026-07-28 client does (the `_meta` envelope and the Mcp-Method/Mcp-Name headers), with an API
// key and with an OAuth access token (a JWT from a loopback issuer), in one run; and the size of
// the tools/list answer an API key gets. The server is dist/server.mjs in its own process on the
// demo store; autocannon drives each case.
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
const listSizes = [];
/** Each case's figures under a short name: `HTTP batch, JWT`. */
const byCase = new Map();
try {
  // The demo registry's companies to look up, and one funded workspace for the API key and the
  // token's subject alike, so both paths do the same work and never run out of credits.
  // A minute to start: on a shared, loaded machine the default ten seconds were not always enough.
  server = await startInstance(path.join(work, 'data'), { HOST: '127.0.0.1', OAUTH_ISSUER: issuer.issuer }, { demo: true, tries: 600 });
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
  const REVISIONS = { 2025: '2025-11-25', 2026: '2026-07-28' };
  /** A tools/call as a client of that revision sends it, after its handshake (2025) or discovery (2026). */
  const toolCall = (year, name, args) => {
    const revision = REVISIONS[year];
    const modern = year === 2026;
    const meta = { 'io.modelcontextprotocol/protocolVersion': revision, 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    return {
      headers: { ...mcpHeaders, 'MCP-Protocol-Version': revision, ...(modern ? { 'Mcp-Method': 'tools/call', 'Mcp-Name': name } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, ...(modern ? { _meta: meta } : {}) } }),
    };
  };
  const mcpCase = (year, what, tool, args, credential, bearer) => {
    const { headers, body } = toolCall(year, tool, args);
    return { key: `MCP ${year} ${what}, ${credential}`, name: `MCP ${REVISIONS[year]} ${tool}${what === 'batch' ? ` (${batch.length} CNPJs)` : ''}, ${credential}`, method: 'POST', url: `${url}/mcp`, headers: { ...headers, Authorization: bearer }, body };
  };
  const cases = (credential, bearer) => [
    { key: `HTTP batch, ${credential}`, name: `HTTP POST cnpj/batch (${batch.length} CNPJs), ${credential}`, method: 'POST', url: `${url}/v1/api/companies/cnpj/batch`, headers: { ...json, Authorization: bearer }, body: JSON.stringify({ cnpjs: batch }) },
    mcpCase(2025, 'batch', 'lookup_cnpj_batch', { cnpjs: batch }, credential, bearer),
    mcpCase(2026, 'batch', 'lookup_cnpj_batch', { cnpjs: batch }, credential, bearer),
    { key: `HTTP credits, ${credential}`, name: `HTTP GET credits, ${credential}`, method: 'GET', url: `${url}/v1/api/credits`, headers: { Authorization: bearer } },
    mcpCase(2025, 'credits', 'get_credits', {}, credential, bearer),
    mcpCase(2026, 'credits', 'get_credits', {}, credential, bearer),
  ];

  // What every conversation of an MCP client pays in context: the tools/list answer for a key holding every scope.
  for (const year of [2025, 2026]) {
    const { headers } = toolCall(year, 'x', {});
    const revision = REVISIONS[year];
    const modern = year === 2026;
    const listHeaders = { ...headers, Authorization: `Bearer ${apiKey}`, ...(modern ? { 'Mcp-Method': 'tools/list' } : {}) };
    delete listHeaders['Mcp-Name'];
    const params = modern ? { _meta: { 'io.modelcontextprotocol/protocolVersion': revision, 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } : {};
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: listHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params }) });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (!res.ok) throw new Error(`tools/list (${revision}): ${res.status}`);
    listSizes.push(`tools/list answer for an API key with every scope, ${revision}: ${bytes} bytes (${(bytes / 1024).toFixed(1)} KiB; budget 48 KB)`);
  }
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
  for (const year of [2025, 2026]) {
    for (const what of ['batch', 'credits']) {
      console.log(`MCP ${year} / HTTP requests/s, ${what}, ${credential}: ${ratio(`MCP ${year} ${what}, ${credential}`, `HTTP ${what}, ${credential}`)} (target >= 85%)`);
    }
  }
}
for (const binding of ['HTTP', 'MCP 2025', 'MCP 2026']) {
  for (const what of ['batch', 'credits']) {
    console.log(`JWT / API key requests/s, ${binding} ${what}: ${ratio(`${binding} ${what}, JWT`, `${binding} ${what}, API key`)} (target >= 90%)`);
  }
}
for (const line of listSizes) console.log(line);
if (rows.some((r) => r.errors)) console.log('WARNING: some cases had non-2xx or errored responses');
