/**
 * The 2026-07-28 revision on `/mcp`, through the official v2 client pinned to it (no handshake:
 * `server/discover`, then each request with its `_meta` envelope and the `Mcp-Method`/`Mcp-Name`
 * headers), and by hand for what a well-behaved client never sends: the same tools, credits and
 * ledger as the 2025-11-25 client and HTTP.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { rawMcp } from '../../helpers/mcp.ts';

const REVISION = '2026-07-28';
const acme = makeCnpj('11222333');
const branch = makeCnpj('11222333', '0002');

let app: TestApp;
const open: Client[] = [];

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'prospecta-tests', version: '1.0.0' }, { versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  open.push(client);
  return client;
}

/** One 2026-07-28 request by hand: the envelope in `_meta`, the headers as a client sends them unless overridden. */
const raw = (key: string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  rawMcp(app.url, key, REVISION, method, params, headers);

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000' });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, branch]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await app.close();
});

describe('a 2026-07-28 client', () => {
  it('discovers the server without a handshake, then lists tools, calls a paid one and is charged exactly as over HTTP', async () => {
    const viaMcp = await app.workspace();
    const viaHttp = await app.workspace();
    const client = await connect(viaMcp.apiKey);
    expect(client.getProtocolEra()).toBe('modern');
    expect(client.getServerVersion()?.name).toBe('prospecta');
    expect(client.getInstructions()).toMatch(/CNPJ/);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('lookup_cnpj_batch');
    expect(tools.find((t) => t.name === 'search_companies')?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });

    const args = { cnpjs: [acme, branch, makeCnpj('44555666')] };
    const result = await client.callTool({ name: 'lookup_cnpj_batch', arguments: args });
    const http = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: viaHttp.apiKey, body: args });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(http.body);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(http.body);

    const movements = async (workspaceId: string) =>
      (await app.services.credits.view(workspaceId))!.movements.map(({ amount, operation, detail, balanceAfter }) => ({ amount, operation, detail, balanceAfter }));
    expect(await movements(viaMcp.workspaceId)).toEqual(await movements(viaHttp.workspaceId));
    expect((await movements(viaMcp.workspaceId))[0]).toMatchObject({ amount: -2, operation: 'lookupCnpjBatch' });
  });

  it('reads an error as {error, message} text, the same as HTTP says it, with no structuredContent to fail the output schema', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(apiKey);
    await client.listTools();
    const result = await client.callTool({ name: 'lookup_cnpj_batch', arguments: { cnpjs: [] } });
    const http = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [] } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({ error: 'invalid_request', message: http.body.message });
    expect(http.body.message).toMatch(/cnpjs/);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(apiKey);
    const err = (await client.callTool({ name: 'launch_rockets', arguments: {} }).catch((e: unknown) => e)) as { code?: number };
    expect(err.code).toBe(-32602);
  });
});

describe('the 2026-07-28 wire', () => {
  it('server/discover names prospecta, the supported versions, tools, and how long it may be kept', async () => {
    const { apiKey } = await app.workspace();
    const { status, body } = await raw(apiKey, 'server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining([REVISION]),
      capabilities: { tools: {} },
      instructions: expect.stringMatching(/prospecta/),
      cacheScope: 'public',
    });
    expect(body.result!.ttlMs).toBeGreaterThan(0);
    expect(body.result!._meta['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'prospecta' });
  });

  it('tools/list says resultType, ttlMs and a private cacheScope, in the registry order', async () => {
    const { apiKey } = await app.workspace();
    const first = await raw(apiKey, 'tools/list');
    const again = await raw(apiKey, 'tools/list');
    expect(first.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(first.body.result!.ttlMs).toBeGreaterThan(0);
    expect(again.body.result!.tools.map((t: { name: string }) => t.name)).toEqual(first.body.result!.tools.map((t: { name: string }) => t.name));
  });

  it('tools/call stamps resultType on the result', async () => {
    const { apiKey } = await app.workspace();
    const { body } = await raw(apiKey, 'tools/call', { name: 'get_credits', arguments: {} });
    expect(body.result).toMatchObject({ resultType: 'complete', structuredContent: { balance: expect.any(Number) } });
  });

  it('refuses a header that disagrees with the body: 400 with -32020', async () => {
    const { apiKey } = await app.workspace();
    const wrongMethod = await raw(apiKey, 'tools/list', {}, { 'Mcp-Method': 'tools/call' });
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.body.error?.code).toBe(-32020);
    const wrongName = await raw(apiKey, 'tools/call', { name: 'get_credits', arguments: {} }, { 'Mcp-Name': 'get_usage' });
    expect(wrongName.status).toBe(400);
    expect(wrongName.body.error?.code).toBe(-32020);
  });

  it('answers 400 when a required header is missing, and names the supported versions for an unknown revision', async () => {
    const { apiKey } = await app.workspace();
    const missing = await raw(apiKey, 'tools/list', {}, { 'Mcp-Method': '' });
    expect(missing.status).toBe(400);
    const future = await raw(apiKey, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }, { 'MCP-Protocol-Version': '2099-01-01' });
    expect(future.status).toBe(400);
    expect(JSON.stringify(future.body.error?.data)).toContain(REVISION);
  });

  it('answers methods the revision removed with 404 and -32601', async () => {
    const { apiKey } = await app.workspace();
    for (const method of ['ping', 'logging/setLevel']) {
      const { status, body } = await raw(apiKey, method, method === 'logging/setLevel' ? { level: 'info' } : {});
      expect(status, method).toBe(404);
      expect(body.error?.code, method).toBe(-32601);
    }
  });

  it('has no prompts or resources: empty lists a client may keep, and a named one is not found (-32602)', async () => {
    const { apiKey } = await app.workspace();
    for (const [method, field] of [['prompts/list', 'prompts'], ['resources/list', 'resources'], ['resources/templates/list', 'resourceTemplates']] as const) {
      const { status, body } = await raw(apiKey, method);
      expect(status, method).toBe(200);
      expect(body.result, method).toMatchObject({ [field]: [], resultType: 'complete', cacheScope: 'public' });
    }
    const read = await raw(apiKey, 'resources/read', { uri: 'prospecta://nothing' }, { 'Mcp-Name': 'prospecta://nothing' });
    expect(read.body.error).toMatchObject({ code: -32602, data: { uri: 'prospecta://nothing' } });
  });

  it('passes a progress token through: a stream tool sends one progress notification per page, then its merged result', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(apiKey);
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'stream_people', arguments: { sourceOrder: ['demo', 'lists'], limit: 3 } },
      { onprogress: (p: { progress: number }) => void progress.push(p.progress) },
    );
    const body = result.structuredContent as { results: unknown[]; total: number };
    expect(body.total).toBe(body.results.length);
    expect(progress).toEqual([1, 2]);
  });
});
