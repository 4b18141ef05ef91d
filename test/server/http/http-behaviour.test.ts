import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../../shared/operations/index.ts';
import type { Operation } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.workspace()).apiKey;
});
afterAll(() => app.close());

function expectErrorShape(body: unknown, code: string) {
  expect(body).toEqual({ error: code, message: expect.any(String) });
}

describe('prefixes and versioning', () => {
  it('serves /v1 and the bare root alias alike', async () => {
    for (const path of ['/v1/health', '/health']) {
      const res = await app.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'ok', store: 'embedded', version: 'test' });
    }
    // The build and the interface are two versions: /health says both, /docs (from /openapi.json) the interface's.
    const [health, openapi] = [(await app.request('GET', '/health')).body, (await app.request('GET', '/openapi.json')).body];
    expect(health.interfaceVersion).toBe('1.0.0');
    expect(openapi.info).toMatchObject({ version: health.interfaceVersion, 'x-server-version': health.version });
    const v1 = await app.request('GET', '/v1/api/credits', { key });
    const root = await app.request('GET', '/api/credits', { key });
    expect(v1.status).toBe(200);
    expect(root.body.balance).toBe(v1.body.balance);
  });

  it('answers Service-Version: 1 on success and on errors', async () => {
    for (const [method, path] of [
      ['GET', '/v1/health'],
      ['GET', '/v1/nope'],
      ['GET', '/v1/api/credits'],
    ] as const) {
      const res = await app.request(method, path);
      expect(res.headers.get('service-version')).toBe('1');
    }
  });

  it('says how long the server itself took (Server-Timing), on success and on errors', async () => {
    for (const res of [await app.request('GET', '/v1/health'), await app.request('GET', '/v1/api/credits')]) {
      expect(res.headers.get('server-timing')).toMatch(/^app;dur=\d+(\.\d)?$/);
    }
  });

  it('accepts Service-Version 1 and refuses any other value', async () => {
    expect((await app.request('GET', '/v1/health', { headers: { 'Service-Version': '1' } })).status).toBe(200);
    const res = await app.request('GET', '/v1/health', { headers: { 'Service-Version': '2' } });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 'unsupported_version');
    expect(res.headers.get('service-version')).toBe('1');
    // An empty header names no version: refused, not read as absent (issue 43).
    const empty = await app.request('GET', '/v1/health', { headers: { 'Service-Version': '' } });
    expect(empty.status).toBe(400);
    expectErrorShape(empty.body, 'unsupported_version');
  });
});

describe('errors always have the {error, message} shape', () => {
  it('unknown routes are 404 not_found', async () => {
    for (const path of ['/v1/api/nothing', '/nothing', '/v2/health']) {
      const res = await app.request('GET', path);
      expect(res.status).toBe(404);
      expectErrorShape(res.body, 'not_found');
    }
  });

  it('a known path with the wrong method is 405 with Allow', async () => {
    const res = await app.request('DELETE', '/v1/api/credits', { key });
    expect(res.status).toBe(405);
    expectErrorShape(res.body, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('malformed JSON is 400 invalid_request', async () => {
    const res = await app.request('POST', '/v1/api/prospecting/templates', {
      key,
      raw: '{"name": "x",',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expectErrorShape(res.body, 'invalid_request');
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const res = await app.request('POST', '/v1/api/prospecting/templates', {
      key,
      body: { name: 'big', offering: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(res.status).toBe(413);
    expectErrorShape(res.body, 'payload_too_large');
  });

  it('a chunked body over 1 MiB (no Content-Length) is 413 too', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (sent++ < 20) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${app.url}/v1/api/prospecting/templates`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expectErrorShape(await res.json(), 'payload_too_large');
  });

  it('a non-JSON body is 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await app.request('POST', '/v1/api/prospecting/templates', {
        key,
        raw: 'name=x',
        headers: { 'Content-Type': type },
      });
      expect(res.status).toBe(415);
      expectErrorShape(res.body, 'unsupported_media_type');
    }
  });

  it('a JSON body that is not an object is 400 naming the body', async () => {
    const res = await app.request('POST', '/v1/api/prospecting/templates', { key, body: [1, 2] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toMatch(/body/);
  });

  it('never leaks a stack trace: garbage in every part of the request', async () => {
    const probes: Array<[string, string, string | undefined]> = [
      ['POST', '/v1/api/sourcing/people?limit[$gt]=1', '{"limit": {"$gt": 0}}'],
      ['PATCH', '/v1/api/prospecting/prospects/%E0%A4%A', '{}'],
      ['GET', '/v1/api/prospecting/prospects?status[]=a&status[]=b', undefined],
      ['POST', '/v1/api/companies/cnpj/batch', '{"cnpjs": [null, {}, 1e309]}'],
      ['POST', '/v1/api/enrich', '\u0000\u0001'],
      ['POST', '/v1/api/ai-column', '{"instruction": "x", "__proto__": {"polluted": 1}}'],
    ];
    for (const [method, path, raw] of probes) {
      const res = await app.request(method, path, {
        key,
        raw,
        headers: raw === undefined ? {} : { 'Content-Type': 'application/json' },
      });
      expect(res.status, `${method} ${path}`).toBeLessThan(500);
      expect(JSON.stringify(res.body)).not.toMatch(/at .*\.(ts|js|mjs):\d+/);
      expect(res.body).toEqual({ error: expect.any(String), message: expect.any(String) });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('request ids', () => {
  it('every response carries one; a safe incoming id is echoed', async () => {
    const fresh = await app.request('GET', '/v1/health');
    expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await app.request('GET', '/v1/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await app.request('GET', '/v1/health', { headers: { 'X-Request-Id': 'a b<script>' } });
    expect(unsafe.headers.get('x-request-id')).not.toBe('a b<script>');
  });
});

describe('catalog and OpenAPI', () => {
  it('health, providers and openapi.json need no key at both roots', async () => {
    for (const prefix of ['', '/v1']) {
      expect((await app.request('GET', `${prefix}/health`)).status).toBe(200);
      const providers = await app.request('GET', `${prefix}/api/providers`);
      expect(providers.status).toBe(200);
      expect(providers.body).toMatchObject({ providers: expect.any(Array), enrichmentFields: expect.any(Array) });
      expect((await app.request('GET', `${prefix}/openapi.json`)).status).toBe(200);
    }
  });

  it('the OpenAPI document lists every operation of the registry with its schemas', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const listed = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(listed.sort()).toEqual(Object.keys(operations).sort());
    for (const [id, op] of Object.entries(operations) as Array<[string, Operation]>) {
      const entry = doc.paths[op.path][op.method.toLowerCase()];
      expect(entry.operationId).toBe(id);
      if (op.request.body) expect(entry.requestBody.content['application/json'].schema).toBeTypeOf('object');
      expect(entry.responses['429']).toBeDefined();
      if (op.scope) expect(entry.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(JSON.stringify(doc)).not.toContain('"$id"');
  });

  it('says what the server enforces: every error status, the body reader\'s rules, the key\'s characters (issue 43)', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        // Service-Version is read before anything else, and the rate limit and the store concern every operation.
        for (const status of ['400', '429', '500', '503']) expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
        if (op.parameters.some((p: { name: string }) => p.name === 'Idempotency-Key')) {
          expect(op.responses['422'].description, `${method} ${path}`).toContain('idempotency_key_reused');
        }
      }
    }
    expect(doc.paths['/health'].get.responses['400'].description).toContain('unsupported_version');
    expect(doc.paths['/api/research'].post.responses['503']).toBeDefined();
    const key = doc.paths['/api/enrich'].post.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    expect(new RegExp(key.schema.pattern).test('with space')).toBe(false);
    // A NUL is refused in every string and property name of a body: the request schemas say so.
    const schemas = doc.components.schemas;
    const nulFree = (pattern: string) => new RegExp(pattern).test('a') && !new RegExp(pattern).test('a\u0000b');
    expect(nulFree(schemas.SheetRowInput.properties.values.propertyNames.pattern)).toBe(true);
    expect(nulFree(schemas.CadenceStepInput.properties.subject.pattern)).toBe(true);
    const templateBody = doc.paths['/api/prospecting/templates'].post.requestBody.content['application/json'].schema;
    expect(nulFree(templateBody.properties.name.pattern)).toBe(true);
    expect(new RegExp(templateBody.properties.name.pattern).test('   ')).toBe(false);
    // Answers make no such promise: a provider or a model may send one.
    expect(schemas.CadenceStep.properties.subject.pattern).toBeUndefined();
    const batch = doc.paths['/api/companies/cnpj/batch'].post.requestBody.content['application/json'].schema;
    expect(batch.properties.cnpjs.items.format).toBe('cnpj');
  });

  it('names the records once in components.schemas and refers to them from the operations', async () => {
    const doc = (await app.request('GET', '/openapi.json')).body;
    const schemas = doc.components.schemas;
    for (const name of ['Company', 'Person', 'Campaign', 'Prospect', 'Template', 'Sheet', 'Credits', 'EnrichResult', 'Error']) {
      expect(schemas[name], name).toMatchObject({ type: 'object', additionalProperties: false });
    }
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const json = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/json'].schema;
    expect(json('/api/prospecting/templates/{templateId}', 'patch', '200')).toEqual(ref('Template'));
    expect(json('/api/credits', 'get', '200')).toEqual(ref('Credits'));
    expect(json('/api/enrich', 'post', '200')).toEqual(ref('EnrichResult'));
    expect(json('/api/enrich', 'post', '402')).toEqual(ref('Error'));
    expect(schemas.CnpjBatchResults.properties.results.items).toEqual(ref('Company'));
    expect(schemas.CampaignDetail.properties.prospects.items).toEqual(ref('Prospect'));
    const stream = doc.paths['/api/companies/search/stream'].post.responses['200'].content['text/event-stream'];
    // Each event as what it is (issue 43): the SSE fields, its name, and its data JSON of the payload's schema;
    // a stream may end with an `error` event.
    const events = Object.fromEntries(stream.schema.oneOf.map((branch: any) => [branch.properties.event.const, branch.properties.data]));
    expect(Object.keys(events).sort()).toEqual(['done', 'error', 'page']);
    expect(events.page).toEqual({ type: 'string', contentMediaType: 'application/json', contentSchema: ref('CompanyPage') });
    expect(schemas.CompanyStreamDone.required).toEqual(expect.arrayContaining(['total', 'sources']));
    // Every reference resolves, and every component is used.
    const used = new Set([...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]));
    expect([...used].filter((name) => !schemas[name!])).toEqual([]);
    expect(Object.keys(schemas).filter((name) => !used.has(name))).toEqual([]);
  });
});
