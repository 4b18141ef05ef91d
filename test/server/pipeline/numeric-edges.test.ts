/**
 * Numbers at the edges (issue 29): `Infinity`, `-Infinity`, `1e309` and `NaN` in a numeric query
 * parameter are a 400 naming it, on every binding. Ajv coerced the first three to numbers and then
 * skipped `minimum`/`maximum`, so `usage?days=Infinity` answered 500 and `ledger?limit=Infinity`
 * the whole ledger past its cap. Every numeric query parameter of the registry is tried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../../shared/operations/index.ts';
import type { Operation } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { signIn } from '../../helpers/dashboard.ts';

const EDGES = ['Infinity', '-Infinity', '1e309', 'NaN', '%2BInfinity'];

let app: TestApp;
let key: string;
let workspaceId: string;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
  ({ apiKey: key, workspaceId } = await app.workspace('active'));
});
afterAll(() => app.close());

type Schema = Record<string, any>;

const isNumeric = (schema: Schema): boolean =>
  schema.type === 'number' || schema.type === 'integer' || (Array.isArray(schema.anyOf) && schema.anyOf.some(isNumeric));

/** Every operation with a numeric query parameter, and the parameter. */
const numericQueries = Object.entries(operations as Record<string, Operation>).flatMap(([id, op]) =>
  Object.entries(((op.request.query as Schema | undefined)?.properties ?? {}) as Record<string, Schema>)
    .filter(([, schema]) => isNumeric(schema))
    .map(([name]) => ({ id, op, name })),
);

const pathOf = (op: Operation) => op.path.replace(/\{(\w+)\}/g, () => crypto.randomUUID());

describe('numeric query parameters', () => {
  it('the registry has some (so the test tests something)', () => {
    expect(numericQueries.map((q) => `${q.id}.${q.name}`)).toEqual(expect.arrayContaining(['listLedger.limit', 'listLedger.before', 'getUsage.days']));
  });

  it('on /v1: a value that is not a finite number is a 400 naming the parameter', async () => {
    const failures: string[] = [];
    for (const { id, op, name } of numericQueries) {
      for (const edge of EDGES) {
        const res = await app.request(op.method, `/v1${pathOf(op)}?${name}=${edge}`, { key });
        if (res.status !== 400 || res.body.error !== 'invalid_request' || !String(res.body.message).startsWith(`${name} must be`)) {
          failures.push(`${id} ?${name}=${edge}: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a finite value within the bounds still passes', async () => {
    expect((await app.request('GET', '/v1/api/credits/ledger?limit=2&before=9007199254740991', { key })).status).toBe(200);
    expect((await app.request('GET', '/v1/api/credits/usage?days=1e1', { key })).body.days).toHaveLength(10);
  });

  it('on /dashboard/api, the same', async () => {
    const cookie = await signIn(app, workspaceId);
    for (const path of ['/dashboard/api/credits/ledger?limit=Infinity', '/dashboard/api/credits/ledger?limit=-Infinity', '/dashboard/api/credits/usage?days=1e309']) {
      const res = await app.request('GET', path, { headers: { Cookie: cookie, Origin: app.url } });
      expect(res.status, path).toBe(400);
      expect(res.body.message, path).toMatch(/^(limit|days) must be a finite number$/);
    }
  });

  it('on MCP, the same, whether the number is sent as text or as 1e309 in the JSON text', async () => {
    for (const args of ['{"limit": "Infinity"}', '{"limit": "-Infinity"}', '{"limit": 1e309}', '{"days": "1e309"}']) {
      const tool = args.includes('days') ? 'get_usage' : 'list_ledger';
      const res = await fetch(`${app.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${key}` },
        body: `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "${tool}", "arguments": ${args}}}`,
      });
      const text = await res.text();
      const body = JSON.parse(text.startsWith('{') ? text : text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
      // 1e309 in the JSON text is refused as the body is read, before any tool runs: a tool error all the same.
      expect(body.error, args).toBeUndefined();
      expect(body.result.isError, args).toBe(true);
      expect(JSON.stringify(body.result.content), args).toMatch(/(limit|days) (must be a finite number|is a number too large)/);
    }
  });
});
