/**
 * Issue 20: what an attacker's inputs get. Every refusal is a 4xx `{error, message}` that names
 * its cause, nothing is parsed before the route, the method, the credential and the rate limit
 * are settled, and the access log records the status that was sent.
 */
import { connect } from 'node:net';
import { gzipSync, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { captureLog, type CapturedLog } from '../../helpers/log-capture.ts';

let app: TestApp;
let key: string;
let logs: CapturedLog;

beforeAll(async () => {
  logs = captureLog('info');
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { log: logs.log });
  key = (await app.workspace()).apiKey;
});
afterAll(() => app.close());

const HYDRATE = '/v1/api/sourcing/people/hydrate';
const TEMPLATES = '/v1/api/prospecting/templates';

/** Sends raw bytes with fetch (the test helper sends strings). */
async function send(path: string, body: Uint8Array | string, headers: Record<string, string> = {}, withKey = true) {
  const res = await fetch(app.url + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(withKey ? { Authorization: `Bearer ${key}` } : {}), ...headers },
    body,
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text: the assertion says so
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

function expectError(res: { status: number; body: any }, status: number, code: string, cause: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({ error: code, message: expect.stringMatching(cause) });
}

const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

describe('1. nesting and key-count limits, enforced before JSON.parse', () => {
  it('a lead nested 6,000 objects or 10,000 arrays deep is 400 naming the limit', async () => {
    const deepObject = `{"leads":[{"name":"a","x":${nested(6000, '{"a":', '}')}}]}`;
    expectError(await send(HYDRATE, deepObject), 400, 'invalid_request', /nested too deeply: at most 64 levels/);
    const deepArray = `{"leads":[{"name":"a","x":${nested(10_000, '[', ']')}}]}`;
    expectError(await send(HYDRATE, deepArray), 400, 'invalid_request', /nested too deeply/);
  });

  it('an object of 60,000 keys is 400 naming the limit', async () => {
    const keys = Array.from({ length: 60_000 }, (_, i) => `"k${i}":1`).join(',');
    expectError(await send(HYDRATE, `{"leads":[{${keys}}]}`), 400, 'invalid_request', /more than 1000 keys/);
  });

  it('nesting within the limit is parsed as before', async () => {
    const res = await send(TEMPLATES, JSON.stringify({ name: 'nest ok', offering: 'x', extra: JSON.parse(nested(10, '[', ']')) }));
    // Past the parse: the schema names the unknown property.
    expectError(res, 400, 'invalid_request', /unknown property extra/);
  });

  it('the access log records the status sent, also when the answer cannot be serialized', async () => {
    const log = captureLog('info');
    const broken = await startTestApp({}, { log: log.log, handlers: { getHealth: async () => ({ big: 1n }) as never } });
    try {
      const res = await fetch(`${broken.url}/v1/health`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'internal_error', message: expect.stringMatching(/request/) });
      const line = log.lines().find((l) => l.msg === 'request' && l.path === '/v1/health');
      expect(line?.status).toBe(500);
    } finally {
      await broken.close();
    }
  });
});

describe('2. content encodings', () => {
  const template = JSON.stringify({ name: 'gzipped', offering: 'x' });

  it('gzip and deflate bodies are decoded', async () => {
    const res = await send(TEMPLATES, gzipSync(template), { 'Content-Encoding': 'gzip' });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('gzipped');
    const deflated = await send(TEMPLATES, deflateSync(JSON.stringify({ name: 'deflated', offering: 'x' })), { 'Content-Encoding': 'deflate' });
    expect(deflated.status).toBe(201);
  });

  it('a body that does not decode is 400 naming the encoding', async () => {
    expectError(await send(TEMPLATES, 'notgzip', { 'Content-Encoding': 'gzip' }), 400, 'invalid_request', /does not decode as Content-Encoding gzip/);
    expectError(await send(TEMPLATES, 'xx', { 'Content-Encoding': 'deflate' }), 400, 'invalid_request', /deflate/);
    const cut = gzipSync(template).subarray(0, 20);
    expectError(await send(TEMPLATES, cut, { 'Content-Encoding': 'gzip' }), 400, 'invalid_request', /gzip/);
  });

  it('an encoding not supported is 415 naming it', async () => {
    expectError(await send(TEMPLATES, template, { 'Content-Encoding': 'compress' }), 415, 'unsupported_media_type', /compress/);
  });

  it('a zip bomb is 413 once decompressed past 1 MiB', async () => {
    const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(64 * 1024);
    expectError(await send(TEMPLATES, bomb, { 'Content-Encoding': 'gzip' }), 413, 'payload_too_large', /decompressed/);
  });
});

describe('3. the route, the method, the credential and the rate limit come before the body', () => {
  const garbage = '{"not json';

  it('an unknown path is 404 whatever the body', async () => {
    expectError(await send('/v1/api/nothing-here', garbage, {}, false), 404, 'not_found', /nothing-here/);
  });

  it('a known path with the wrong method is 405 whatever the body', async () => {
    expectError(await send('/v1/api/credits', garbage), 405, 'method_not_allowed', /GET/);
  });

  it('no credential, or a bad one, is 401 before the body is read', async () => {
    expectError(await send(TEMPLATES, garbage, {}, false), 401, 'unauthorized', /.+/);
    expectError(await send(TEMPLATES, garbage, { Authorization: 'Bearer service_live_nope' }), 401, 'unauthorized', /.+/);
  });

  it('the rate limit is 429 before the body is read', async () => {
    const limited = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1' });
    try {
      const { apiKey } = await limited.workspace();
      await fetch(`${limited.url}/v1/health`, { headers: { Authorization: `Bearer ${apiKey}` } });
      const res = await fetch(`${limited.url}${TEMPLATES}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: garbage,
      });
      expect(res.status).toBe(429);
      expect(((await res.json()) as { error: string }).error).toBe('rate_limited');
    } finally {
      await limited.close();
    }
  });
});

describe('4. every malformed body names its cause', () => {
  const cases: Array<[string, string | Uint8Array, RegExp]> = [
    ['a __proto__ key', '{"name": "x", "offering": "y", "__proto__": {"polluted": 1}}', /__proto__/],
    ['whitespace only', '   \n ', /only whitespace/],
    ['NaN', '{"name": NaN}', /not valid JSON/],
    ['a raw NUL byte', '{"name": "a\u0000b"}', /not valid JSON: Bad control character/],
    ['trailing garbage', '{"name": "x"} trailing', /not valid JSON: Unexpected non-whitespace character after JSON at position 14/],
    ['a JSON-escaped NUL', '{"name": "a\\u0000b", "offering": "y"}', /name must not contain a NUL character/],
    // Issue 39: JSON.parse would keep the last silently; the client meant one of them.
    ['a repeated member name', '{"name": "x", "offering": "y", "name": "z"}', /^name is sent more than once/],
    ['a repeated member name spelt with an escape', '{"name": "x", "offering": "y", "n\\u0061me": "z"}', /^name is sent more than once/],
    ['a repeated member name deep inside', '{"leads": [{"name": "a"}, {"name": "b", "email": "x@y.z", "email": "q@y.z"}]}', /^leads\[1\]\.email is sent more than once/],
  ];
  for (const [what, body, cause] of cases) {
    it(what, async () => {
      const res = await send(TEMPLATES, body);
      expectError(res, 400, 'invalid_request', cause);
      expect(res.body.message).not.toBe('The request is invalid.');
    });
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

describe('4b. only application/json is a JSON body (issue 39)', () => {
  it('application/merge-patch+json and other +json types are 415; application/json with a charset is JSON', async () => {
    const template = JSON.stringify({ name: `t-${Date.now()}`, offering: 'y' });
    for (const type of ['application/merge-patch+json', 'application/vnd.api+json', 'application/problem+json; charset=utf-8']) {
      expectError(await send(TEMPLATES, template, { 'Content-Type': type }), 415, 'unsupported_media_type', /application\/json/);
    }
    expect((await send(TEMPLATES, template, { 'Content-Type': 'application/json; charset=utf-8' })).status).toBe(201);
  });
});

describe('7. two Authorization headers', () => {
  it('are refused with 400, whichever comes first', async () => {
    const { hostname, port } = new URL(app.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.end(`GET /v1/api/credits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer service_live_other\r\nConnection: close\r\n\r\n`);
      });
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    expect(body).toEqual({ error: 'invalid_request', message: expect.stringMatching(/one Authorization header/) });
  });
});

/** Sends `request` as is on a fresh connection and returns the status and the parsed body. */
function rawExchange(request: string): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]);
      try {
        resolve({ status, headers: text.slice(0, split), body: JSON.parse(text.slice(split + 4)) });
      } catch {
        resolve({ status, headers: text.slice(0, split), body: text.slice(split + 4) });
      }
    });
    socket.on('error', reject);
  });
}

describe('5. what Node answers itself is JSON with a request id', () => {
  it('a 20 KB Authorization header is 431 headers_too_large', async () => {
    const res = await rawExchange(`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body).toEqual({ error: 'headers_too_large', message: expect.stringMatching(/16 KiB.*request [0-9a-f-]{36}/) });
    expect(res.headers).toMatch(/X-Request-Id: [0-9a-f-]{36}/);
    expect(res.headers).toMatch(/Service-Version: 1/);
  });

  it('a 70 KB URL is 431 too', async () => {
    const res = await rawExchange(`GET /v1/health?${'q=1&'.repeat(17_500)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.body.error).toBe('headers_too_large');
  });

  it('a bad request line is 400 invalid_request naming the parser error', async () => {
    const res = await rawExchange('NOT A REQUEST\r\n\r\n');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', message: expect.stringMatching(/not valid HTTP\/1\.1 \(HPE_/) });
  });
});

describe('6. input hygiene', () => {
  it('bytes that are not UTF-8 are 400, not replaced', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name": "caf'), Buffer.from([0xe9]), Buffer.from('", "offering": "x"}')]);
    expectError(await send(TEMPLATES, bytes), 400, 'invalid_request', /not valid UTF-8/);
  });

  it('a lone surrogate is refused in values and in property names', async () => {
    expectError(await send(TEMPLATES, '{"name": "a\\ud800b", "offering": "x"}'), 400, 'invalid_request', /name must not contain a lone surrogate/);
    const sheet = '{"name": "s", "rows": [{"rowId": "r1", "values": {"\\udc00": "v"}}]}';
    expectError(await send('/v1/api/sheets', sheet), 400, 'invalid_request', /property name .*lone surrogate/);
  });

  it('names are trimmed, and a blank one is refused', async () => {
    expectError(await send(TEMPLATES, JSON.stringify({ name: ' \t ', offering: 'x' })), 400, 'invalid_request', /^name must not be blank$/);
    expectError(await send('/v1/api/sheets', JSON.stringify({ name: '   ', rows: [] })), 400, 'invalid_request', /^name must not be blank$/);
    const saved = await send(TEMPLATES, JSON.stringify({ name: '  Padded  ', offering: 'x' }));
    expect(saved.status).toBe(201);
    expect(saved.body.name).toBe('Padded');
  });

  it('a cadence day past the bound is refused, not rounded', async () => {
    const campaign = '00000000-0000-4000-8000-000000000000';
    const res = await fetch(`${app.url}/v1/api/prospecting/campaigns/${campaign}/cadence`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: '{"steps": [{"day": 9007199254740993, "channel": "email", "body": "hi"}]}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', message: 'steps[0].day must be <= 3650' });
  });

  it('hydrate refuses numbers where a lead means text', async () => {
    expectError(await send(HYDRATE, '{"leads": [{"phone": 1e308}]}'), 400, 'invalid_request', /^leads\[0\]\.phone must be a string or null$/);
    expectError(await send(HYDRATE, '{"leads": [{"cnpj": 11222333000181}]}'), 400, 'invalid_request', /^leads\[0\]\.cnpj must be a string or null$/);
  });

  it('body fields are never coerced', async () => {
    expectError(await send(TEMPLATES, '{"name": 5, "offering": "x"}'), 400, 'invalid_request', /^name must be a string$/);
    expectError(await send('/v1/api/sourcing/people', '{"limit": "5"}'), 400, 'invalid_request', /^limit must be an integer$/);
  });
});
