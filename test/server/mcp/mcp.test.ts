/**
 * The MCP binding through the official SDK v1 client (protocol 2025-11-25) over real HTTP: every
 * registry operation is a tool, called exactly as over HTTP (same body, same errors, same credits
 * and ledger), filtered by scope, and the transport refuses what is not one JSON-RPC message with
 * a credential. The 2026-07-28 revision is `mcp-2026.test.ts`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../../shared/operations/index.ts';
import { SCOPES, type Scope } from '../../../shared/operations/types.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { toolName } from '../../../server/tools/tools.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { assertMatches } from '../../helpers/contract.ts';
import { envelope } from '../../helpers/mcp.ts';

let app: TestApp;
const open: Client[] = [];
const acme = makeCnpj('11222333');
const branch = makeCnpj('11222333', '0002');

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'prospecta-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

async function keyFor(plan: 'trial' | 'active' | 'none' = 'trial', scopes: Scope[] = [...SCOPES]) {
  const { workspaceId } = await app.workspace(plan);
  const { apiKey } = await app.services.keys.create(workspaceId, scopes);
  return { workspaceId, apiKey };
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/**
 * What an error result says: `{error, message}` as the JSON of its one text item, and no
 * `structuredContent` (the client would check it against the tool's output schema and throw).
 */
function errorOf(result: CallToolResult): { error: string; message: string } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  expect(result.content).toHaveLength(1);
  return JSON.parse((result.content[0] as { text: string }).text) as { error: string; message: string };
}

/** The annotations decisions.md asks for, spelled out here rather than read from the code under test. */
const READ_ONLY_SCOPES = ['search:write', 'enrich:write', 'research:write'];

/** Raw JSON-RPC over HTTP, for what a well-behaved client never sends. */
const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body,
  });

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000' });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, branch]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await app.close();
});

describe('tools', () => {
  it('initializes as prospecta, with instructions', async () => {
    const client = await connect((await keyFor()).apiKey);
    expect(client.getServerVersion()?.name).toBe('prospecta');
    expect(client.getInstructions()).toMatch(/CNPJ/);
  });

  it('lists one tool per registry operation, named in snake_case, with merged input and output schemas', async () => {
    const client = await connect((await keyFor()).apiKey);
    const { tools } = await client.listTools();
    // The agent's own operations are declared `tool: false`.
    const expected = Object.entries(operations).filter(([, op]) => (op as { tool?: false }).tool !== false).map(([id]) => toolName(id)).sort();
    expect(expected).not.toContain('agent_chat');
    expect(tools.map((t) => t.name).sort()).toEqual(expected);
    expect(expected).toContain('lookup_cnpj_batch');

    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const [id, op] of Object.entries(operations)) {
      if ((op as { tool?: false }).tool === false) continue;
      const tool = byName.get(toolName(id))!;
      // MCP's defaults left unsaid: readOnlyHint and idempotentHint false, destructiveHint on read-only tools.
      // A POST that creates something (201, or 202 for a job: the export) is no read.
      const creates = 201 in op.responses || 202 in op.responses;
      const readOnly = op.method === 'GET' || (op.method === 'POST' && READ_ONLY_SCOPES.includes(op.scope ?? '') && !creates);
      expect(tool.annotations).toEqual({
        title: op.summary,
        ...(readOnly ? { readOnlyHint: true } : { destructiveHint: op.method === 'DELETE' }),
        ...(['GET', 'PUT', 'DELETE'].includes(op.method) ? { idempotentHint: true } : {}),
        openWorldHint: READ_ONLY_SCOPES.includes(op.scope ?? ''),
      });
      // What it does, costs and needs; never an HTTP status a tool caller cannot see.
      expect(tool.description, tool.name).not.toMatch(/(answers|status) [1-5]\d\d\b|\b[1-5]\d\d (when|if|while|`)|HTTP|text\/event-stream/);
      expect(tool.description, tool.name).toMatch(/Costs|no credits|Free/);
      if (op.requiresPlan) expect(tool.description, tool.name).toMatch(/plan/);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      // Path, query and body fields in one object; the company search's filters, where a later tool
      // takes them all again, by a sentence naming the tool that lists them (tools.ts, referToShared).
      const fields = Object.values(op.request).flatMap((schema: TSchema) => Object.keys(schema.properties ?? {}));
      const referred = /every field of (\w+)\.$/.exec(tool.description ?? '')?.[1];
      const listed = Object.keys(tool.inputSchema.properties ?? {});
      if (referred && !listed.includes('filters')) {
        const theirs = Object.keys(byName.get(referred)!.inputSchema.properties ?? {});
        expect([...listed, ...theirs.filter((name) => fields.includes(name) && !listed.includes(name))].sort(), tool.name).toEqual(fields.sort());
        expect(tool.inputSchema.additionalProperties, tool.name).toBe(true);
      } else expect(listed.sort(), tool.name).toEqual(fields.sort());
    }
    expect(byName.get('get_prospect')!.inputSchema.required).toEqual(['prospectId']);
    // What the registry says of the tool stays; only what it says of HTTP goes.
    expect(byName.get('lookup_cnpj_batch')!.description).toBe('Up to 500 CNPJs at once. Costs 1 credit per company found. Needs an active plan.');
    expect(byName.get('update_template')!.description).toBe('The only way to rename a template. Omitted fields keep their value. Free. Needs an active plan.');
    // The AI column's row fields are free-form strings, as over HTTP.
    expect(byName.get('ai_column')!.inputSchema.additionalProperties).toMatchObject({ type: 'string' });
    // Searches and lookups change nothing: a client need not ask before each.
    expect(byName.get('search_companies')!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(byName.get('create_template')!.annotations).toMatchObject({ destructiveHint: false, openWorldHint: false });
    expect(byName.get('create_template')!.annotations?.readOnlyHint).toBeUndefined();
    expect(byName.get('stream_people')!.outputSchema!.required).toEqual(expect.arrayContaining(['results', 'total', 'sources']));
  });

  it('lists only the tools whose scope the key holds; calling another says which scope it lacks', async () => {
    const client = await connect((await keyFor('trial', ['credits:read'])).apiKey);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    const allowed = Object.entries(operations).filter(([, op]) => (op as { tool?: false }).tool !== false && (op.scope === null || op.scope === 'credits:read'));
    expect(names).toEqual(allowed.map(([id]) => toolName(id)).sort());
    expect(names).toContain('get_credits');
    const refused = await call(client, 'lookup_cnpj_batch', { cnpjs: [acme] });
    expect(errorOf(refused)).toEqual({ error: 'insufficient_scope', message: 'This operation needs the search:write scope.' });
  });

  it('answers exactly the HTTP body, and charges and records it exactly as HTTP does', async () => {
    const viaMcp = await keyFor();
    const viaHttp = await keyFor();
    const client = await connect(viaMcp.apiKey);
    const args = { cnpjs: [acme, branch, makeCnpj('44555666')] };
    const result = await call(client, 'lookup_cnpj_batch', args);
    const http = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: viaHttp.apiKey, body: args });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(http.body);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(http.body);
    assertMatches(operations.lookupCnpjBatch.responses[200], result.structuredContent, 'lookup_cnpj_batch');

    const movements = async (workspaceId: string) =>
      (await app.services.credits.view(workspaceId))!.movements.map(({ amount, operation, detail, balanceAfter }) => ({ amount, operation, detail, balanceAfter }));
    expect(await movements(viaMcp.workspaceId)).toEqual(await movements(viaHttp.workspaceId));
    expect((await movements(viaMcp.workspaceId))[0]).toMatchObject({ amount: -2, operation: 'lookupCnpjBatch' });
  });

  it('takes an Idempotency-Key in _meta.idempotencyKey: a repeated call is answered again, not charged again', async () => {
    const { apiKey, workspaceId } = await keyFor();
    const client = await connect(apiKey);
    const args = { cnpjs: [acme, branch] };
    const once = (idempotencyKey: unknown, cnpjs = args) =>
      client.callTool({ name: 'lookup_cnpj_batch', arguments: cnpjs, _meta: { idempotencyKey } }) as Promise<CallToolResult>;
    const first = await once('mcp-call-1');
    const again = await once('mcp-call-1');
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(first.structuredContent);
    const reused = await once('mcp-call-1', { cnpjs: [acme] });
    expect(errorOf(reused)).toMatchObject({ error: 'idempotency_key_reused' });
    // A key of another type is refused as such, not read as an empty key.
    for (const [key, type] of [[42, 'a number'], [{ id: 1 }, 'an object'], [['k'], 'an array']] as const) {
      expect(errorOf(await once(key))).toEqual({ error: 'invalid_request', message: `_meta.idempotencyKey must be a string (a unique value per call, e.g. a UUID), not ${type}.` });
    }
    const debits = (await app.services.credits.view(workspaceId))!.movements.filter((m) => m.amount < 0);
    expect(debits).toHaveLength(1);
  });

  it('answers the HTTP body for a sample of read and search operations', async () => {
    const { apiKey } = await keyFor();
    const client = await connect(apiKey);
    const sample: Array<[string, Record<string, unknown>, string, string]> = [
      ['get_health', {}, 'GET', '/v1/health'],
      ['list_providers', {}, 'GET', '/v1/api/providers'],
      ['search_companies', { state: 'SP', limit: 5 }, 'POST', '/v1/api/companies/search'],
      ['list_campaigns', {}, 'GET', '/v1/api/prospecting/campaigns'],
    ];
    for (const [tool, args, method, path] of sample) {
      const result = await call(client, tool, args);
      const http = await app.request(method, path, { key: apiKey, ...(method === 'POST' ? { body: args } : {}) });
      expect(result.isError, tool).toBeFalsy();
      expect(result.structuredContent, tool).toEqual(http.body);
    }
  });

  it('reads path and query fields from the one argument object', async () => {
    const client = await connect((await keyFor()).apiKey);
    const created = await call(client, 'create_template', { name: 'Intro', offering: 'Data for analysts' });
    expect(created.isError).toBeFalsy();
    const { templateId } = created.structuredContent as { templateId: string };
    const renamed = await call(client, 'update_template', { templateId, name: 'Intro v2' });
    expect(renamed.structuredContent).toMatchObject({ templateId, name: 'Intro v2' });
    const listed = await call(client, 'list_templates');
    expect((listed.structuredContent as { templates: unknown[] }).templates).toEqual([expect.objectContaining({ name: 'Intro v2' })]);
  });

  it('answers every error HTTP would as isError with the same code and message, so a model can correct itself', async () => {
    const { apiKey } = await keyFor();
    const client = await connect(apiKey);
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['search_people', { limit: 26 }, 'POST /v1/api/sourcing/people', 'invalid_request'],
      ['search_people', { shoeSize: 42 }, 'POST /v1/api/sourcing/people', 'invalid_request'],
      ['search_companies', { limit: 100, state: 'Sao Paulo', simplesOption: true }, 'POST /v1/api/companies/search', 'invalid_request'],
      ['lookup_cnpj_batch', { cnpjs: ['nope'] }, 'POST /v1/api/companies/cnpj/batch', 'invalid_cnpj'],
      ['get_prospect', { prospectId: '6a1a2f3e-1111-4111-8111-111111111111' }, 'GET /v1/api/prospecting/prospects/6a1a2f3e-1111-4111-8111-111111111111', 'not_found'],
    ];
    for (const [tool, args, route, code] of cases) {
      const result = await call(client, tool, args);
      const [method, path] = route.split(' ') as [string, string];
      const http = await app.request(method, path, { key: apiKey, ...(method === 'POST' ? { body: args } : {}) });
      expect(errorOf(result), tool).toEqual({ error: code, message: http.body.message });
      expect(http.body.error).toBe(code);
    }
    expect(errorOf(await call(client, 'get_health', { verbose: true }))).toEqual({ error: 'invalid_request', message: 'unknown property verbose' });
    // One 400 names every violation, and the filter an unknown property resembles; the body keeps only error and message.
    const all = await app.request('POST', '/v1/api/companies/search', { key: apiKey, body: { limit: 100, state: 'Sao Paulo', simplesOption: true } });
    expect(all.body).toEqual({
      error: 'invalid_request',
      message: 'unknown property simplesOption: did you mean simpleOption?; state must be exactly 2 characters; limit must be <= 20',
    });
  });

  it('gates plan-requiring tools on the plan, like HTTP; the credits read stays open', async () => {
    const client = await connect((await keyFor('none')).apiKey);
    const blocked = await call(client, 'lookup_cnpj_batch', { cnpjs: [acme] });
    expect(errorOf(blocked)).toMatchObject({ error: 'plan_required' });
    const credits = await call(client, 'get_credits');
    expect(credits.structuredContent).toMatchObject({ balance: 0, plan: { name: 'none' } });
  });

  it('an unknown tool is a JSON-RPC invalid-params error', async () => {
    const client = await connect((await keyFor()).apiKey);
    const err = await call(client, 'launch_rockets').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('a stream tool answers every page merged, with one progress notification per page', async () => {
    const client = await connect((await keyFor()).apiKey);
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = (await client.callTool(
      { name: 'stream_people', arguments: { sourceOrder: ['demo', 'lists'], limit: 3 } },
      undefined,
      { onprogress: (p) => void progress.push(p) },
    )) as CallToolResult;
    const body = result.structuredContent as { results: unknown[]; total: number; sources: Array<{ source: string }> };
    expect(body.total).toBe(body.results.length);
    expect(body.sources.map((s) => s.source)).toEqual(expect.arrayContaining(['demo', 'lists']));
    expect(progress.map((p) => p.progress)).toEqual([1, 2]);
  });

  it('keeps workspaces apart', async () => {
    const a = await connect((await keyFor()).apiKey);
    const b = await connect((await keyFor()).apiKey);
    const created = await call(a, 'create_template', { name: 'Mine', offering: 'Secret offer' });
    const { templateId } = created.structuredContent as { templateId: string };
    expect((await call(b, 'list_templates')).structuredContent).toEqual({ templates: [] });
    expect(errorOf(await call(b, 'delete_template', { templateId }))).toMatchObject({ error: 'not_found' });
  });
});

describe('the transport', () => {
  it('answers 401 with the resource metadata when no credential, or a bad one, is sent', async () => {
    for (const headers of [{}, { Authorization: 'Bearer service_live_nope' }] as Array<Record<string, string>>) {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: 'unauthorized' });
      expect(res.headers.get('www-authenticate')).toContain('resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource/mcp"');
    }
  });

  it('GET and DELETE answer 405 with Allow: POST, also under /v1', async () => {
    const { apiKey } = await keyFor();
    for (const [method, path] of [['GET', '/mcp'], ['DELETE', '/mcp'], ['GET', '/v1/mcp']] as const) {
      const res = await app.request(method, path, { key: apiKey });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.body.error).toBe('method_not_allowed');
    }
  });

  it('refuses what is not one JSON-RPC message with a JSON-RPC error, never a 500', async () => {
    const auth = { Authorization: `Bearer ${(await keyFor()).apiKey}` };
    const cases: Array<[string, number, number]> = [
      ['{not json', 400, -32700],
      // JSON, but not a JSON-RPC message: an invalid request, not a parse error.
      ['{"jsonrpc":"2.0","id":1}', 400, -32600],
      ['{"jsonrpc":"1.0","id":1,"method":"tools/list"}', 400, -32600],
      ['{"jsonrpc":"2.0","id":1,"method":42}', 400, -32600],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', 400, -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}', 400, -32600],
      ['[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', 400, -32600],
      ['"just a string"', 400, -32600],
      [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { x: 'y'.repeat(1024 * 1024) } }), 413, -32000],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body, auth);
      expect(res.status, body.slice(0, 30)).toBe(status);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(code);
    }
    const unknown = await post(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/teleport' }), auth);
    const text = await unknown.text();
    expect(text).toContain('-32601');
  });

  it('answers a __proto__ or a repeated name in the arguments as a tool error naming it, on both revisions (issue 39)', async () => {
    const auth = { Authorization: `Bearer ${(await keyFor()).apiKey}` };
    const cases: Array<[string, RegExp]> = [
      ['{"name": "x", "__proto__": {"polluted": 1}}', /^arguments must not have a property named __proto__/],
      ['{"name": "x", "offering": "y", "tone": {"__proto__": 1}}', /^tone must not have a property named __proto__/],
      ['{"name": "x", "offering": "y", "name": "z"}', /^name is sent more than once/],
    ];
    for (const revision of ['2025-11-25', '2026-07-28'] as const) {
      for (const [args, message] of cases) {
        const modern = revision === '2026-07-28';
        const meta = modern ? `, "_meta": ${JSON.stringify(envelope(revision))}` : '';
        const res = await post(`{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "create_template", "arguments": ${args}${meta}}}`, {
          ...auth,
          'MCP-Protocol-Version': revision,
          ...(modern ? { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'create_template' } : {}),
        });
        const text = await res.text();
        const body = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
        expect(body.error, `${revision} ${args}`).toBeUndefined();
        const refused = errorOf(body.result);
        expect(refused.error).toBe('invalid_request');
        expect(refused.message, `${revision} ${args}`).toMatch(message);
      }
    }
    // Outside a tool's arguments it is still no JSON-RPC message.
    const outside = await post('{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "method": "tools/call"}', auth);
    expect(((await outside.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32700, message: /method is sent more than once/ });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("holds a tool call to its operation's HTTP body limit: start_job's 8 MiB, 1 MiB for the others", async () => {
    const { apiKey } = await keyFor();
    const auth = { Authorization: `Bearer ${apiKey}` };
    const call = (name: string, args: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    // 10,000 items of 64-character ids: past 1 MiB, within a job's 8 MiB.
    const items = Array.from({ length: 10_000 }, (_, i) => ({ itemId: String(i).padStart(64, '0'), input: { cnpjs: [acme] } }));
    const job = call('start_job', { operation: 'lookupCnpjBatch', items });
    expect(Buffer.byteLength(job)).toBeGreaterThan(1024 * 1024);
    const started = await post(job, auth);
    expect(started.status).toBe(200);
    const { result } = (await started.json()) as { result: CallToolResult };
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    const { jobId, total } = result.structuredContent as { jobId: string; total: number };
    expect(total).toBe(10_000);
    expect((await app.request('POST', `/v1/api/jobs/${jobId}/cancel`, { key: apiKey })).status).toBe(200);
    // The same weight for an operation that takes 1 MiB is refused, as over HTTP.
    const lookup = call('lookup_cnpj_batch', { cnpjs: [acme], padding: 'x'.repeat(1024 * 1024) });
    const refused = await post(lookup, auth);
    expect(refused.status).toBe(413);
    expect(await refused.json()).toMatchObject({ error: { code: -32000, message: 'The message is larger than 1 MiB.' } });
    // Past 8 MiB, whatever it calls.
    const huge = await post(call('start_job', { operation: 'lookupCnpjBatch', items, padding: 'x'.repeat(8 * 1024 * 1024) }), auth);
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { message: 'The message is larger than 8 MiB.' } });
  });

  it('refuses a page of another origin with 403 forbidden_origin before the credential is even read', async () => {
    const auth = { Authorization: `Bearer ${(await keyFor()).apiKey}` };
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (const [path, headers] of [['/mcp', { Origin: 'https://evil.example', ...auth }], ['/v1/mcp', { Origin: 'https://evil.example' }], ['/mcp', { Origin: 'null' }]] as const) {
      const res = await fetch(`${app.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: list });
      expect(res.status, path).toBe(403);
      expect(await res.json()).toMatchObject({ error: 'forbidden_origin' });
    }
    // The service's own origin (PUBLIC_URL's) passes, as does a client that sends none.
    expect((await post(list, { Origin: 'http://localhost:8080', ...auth })).status).toBe(200);
    expect((await post(list, auth)).status).toBe(200);
    // Other API routes are not MCP's to guard.
    expect((await app.request('GET', '/v1/health', { headers: { Origin: 'https://evil.example' } })).status).toBe(200);
  });

  it('accepts the origins MCP_ALLOWED_ORIGINS lists', async () => {
    const other = await startTestApp({ MCP_ALLOWED_ORIGINS: 'https://app.example.com, http://127.0.0.1:5173' });
    try {
      const { apiKey } = await other.workspace();
      const send = (origin: string) =>
        fetch(`${other.url}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${apiKey}`, Origin: origin },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
      expect((await send('https://app.example.com')).status).toBe(200);
      expect((await send('http://127.0.0.1:5173')).status).toBe(200);
      expect((await send('https://app.example.com.evil.example')).status).toBe(403);
    } finally {
      await other.close();
    }
  });

  it('takes localhost and 127.0.0.1 for one origin when PUBLIC_URL is a loopback address, and refuses every other', async () => {
    // This app's PUBLIC_URL is the default, http://localhost:8080.
    const auth = { Authorization: `Bearer ${(await keyFor()).apiKey}` };
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    for (const origin of ['http://localhost:8080', 'http://127.0.0.1:8080']) expect((await post(list, { Origin: origin, ...auth })).status, origin).toBe(200);
    for (const origin of ['http://127.0.0.1:8081', 'https://127.0.0.1:8080', 'http://localhost', 'http://127.0.0.2:8080', 'http://localhost.evil.example:8080', 'http://evil.example:8080']) {
      expect((await post(list, { Origin: origin, ...auth })).status, origin).toBe(403);
    }
    // A public address has no other name: a loopback page is a foreign one there.
    const hosted = await startTestApp({ PUBLIC_URL: 'https://prospecta.example.com' });
    try {
      const { apiKey } = await hosted.workspace();
      const send = (origin: string) =>
        fetch(`${hosted.url}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${apiKey}`, Origin: origin },
          body: list,
        });
      expect((await send('https://prospecta.example.com')).status).toBe(200);
      for (const origin of ['http://localhost:8080', 'http://127.0.0.1:8080', `http://127.0.0.1:${new URL(hosted.url).port}`]) expect((await send(origin)).status, origin).toBe(403);
    } finally {
      await hosted.close();
    }
  });

  it('counts MCP requests against the same rate limit as HTTP', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const { workspaceId } = await limited.workspace();
      const { apiKey } = await limited.services.keys.create(workspaceId);
      const send = () =>
        fetch(`${limited.url}/mcp`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
        });
      expect((await send()).status).toBe(200);
      expect((await limited.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
      const third = await send();
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await limited.close();
    }
  });
});
