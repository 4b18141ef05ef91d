/**
 * Issue 20: a fuzz of every operation, generated from the registry's schemas. For each operation
 * it sends a plausible request (each declared field filled from its schema), then that request
 * with one field at a time replaced by something hostile: a value of every wrong type, MongoDB
 * operator objects, prototype keys, huge and deeply nested values; bad path parameters; garbage
 * query strings; and whole bodies that are not objects. Every answer must be below 500, and every
 * 4xx exactly `{error, message}` with a message that says something (`request` also holds every
 * answer to the operation's response schemas). Deterministic: no randomness, so a failure repeats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../../shared/operations/index.ts';
import type { Operation } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakeLlm, startFakeWeb, type FakeLlm, type FakeWeb } from '../../helpers/fake-llm.ts';

type Schema = Record<string, any>;

let app: TestApp;
let llm: FakeLlm;
let web: FakeWeb;
let key: string;

beforeAll(async () => {
  // The model answers anything with a short JSON that every AI operation can use.
  [llm, web] = await Promise.all([startFakeLlm(() => JSON.stringify({ answer: 'ok', citations: [] })), startFakeWeb()]);
  app = await startTestApp({
    RATE_LIMIT_PER_MINUTE: '1000000',
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: llm.key,
    LLM_MODEL: 'fake-model',
    SEARXNG_URL: web.url,
  });
  key = (await app.workspace('active')).apiKey;
});
afterAll(async () => {
  await app.close();
  await Promise.all([llm.close(), web.close()]);
});

const deep = (levels: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { d: value };
  return value;
};

/** Raw JSON texts: what JSON.stringify cannot write (an own `__proto__`), and what it writes. */
const HOSTILE: Array<[string, string]> = [
  ['null', 'null'],
  ['true', 'true'],
  ['zero', '0'],
  ['negative', '-1'],
  ['fraction', '0.5'],
  ['huge number', '1e308'],
  ['past 2^53', '9007199254740993'],
  ['empty string', '""'],
  ['blank string', '"   "'],
  ['string', '"x"'],
  ['numeric string', '"12"'],
  ['long string', JSON.stringify('x'.repeat(100_000))],
  ['escaped NUL', '"a\\u0000b"'],
  ['lone surrogate', '"\\ud800"'],
  ['empty array', '[]'],
  ['array of junk', '[null, {}, [], 1, "x"]'],
  ['long array', JSON.stringify(Array.from({ length: 5_000 }, (_, i) => i))],
  ['empty object', '{}'],
  ['$gt operator', '{"$gt": ""}'],
  ['$where operator', '{"$where": "sleep(1000)"}'],
  ['$ne null', '{"$ne": null}'],
  ['$regex', '{"$regex": ".*"}'],
  ['__proto__ key', '{"__proto__": {"polluted": true}}'],
  ['constructor key', '{"constructor": {"prototype": {"polluted": true}}}'],
  ['dotted key', '{"a.b": 1, "$set": {"x": 1}}'],
  ['deep, within limits', JSON.stringify(deep(50))],
  ['deep, past limits', JSON.stringify(deep(200))],
];

/** A value the schema accepts, as far as a few rules can tell (formats and patterns included). */
function sample(schema: Schema | undefined, name = ''): unknown {
  if (!schema) return undefined;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return sample(schema.anyOf.find((s: Schema) => s.type !== 'null') ?? schema.anyOf[0], name);
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [prop, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if (schema.required?.includes(prop) || isIdentifier(prop)) out[prop] = sample(sub, prop);
      }
      return out;
    }
    case 'array': {
      const item = sample(schema.items, name);
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, Math.min(1, schema.maximum ?? 1));
    case 'boolean':
      return false;
    case 'string':
      return sampleString(schema, name);
    default:
      return 'x';
  }
}

const isIdentifier = (prop: string) => prop === 'email' || prop === 'cnpj';

function sampleString(schema: Schema, name: string): string {
  if (schema.format === 'uuid') return crypto.randomUUID();
  if (schema.format === 'email') return 'ana@example.com';
  if (schema.format === 'uri') return 'https://example.com/';
  if (schema.format === 'date') return '2024-01-31';
  if (schema.format === 'date-time') return '2024-01-31T12:00:00Z';
  if (name === 'cnpj' || name === 'cnpjs') return '11222333000181';
  if (schema.pattern === '^[0-9]{7}$') return '4711302';
  if (schema.pattern && /\[A-Z\]|\[0-9\]/.test(schema.pattern)) return '11222333000181';
  const length = Math.max(1, schema.minLength ?? 1);
  return 'a'.repeat(Math.min(length, schema.maxLength ?? length));
}

/** Top-level properties of a part, and one level down inside object properties. */
function fieldPaths(schema: Schema | undefined): string[][] {
  if (!schema || schema.type !== 'object') return [];
  const paths: string[][] = [];
  for (const [prop, sub] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
    paths.push([prop]);
    const inner = sub.type === 'array' ? sub.items : sub;
    if (inner?.type === 'object') {
      for (const child of Object.keys(inner.properties ?? {}).slice(0, 6)) {
        paths.push(sub.type === 'array' ? [prop, '0', child] : [prop, child]);
      }
    }
  }
  return paths;
}

/** The base body's JSON with the value at `path` replaced by `raw` JSON text. */
function withRaw(base: unknown, path: string[], raw: string): string {
  const marker = `__FUZZ_${Math.random().toString(36).slice(2)}__`;
  const copy = (base !== null && typeof base === 'object' ? structuredClone(base) : {}) as Record<string, any>;
  let at: any = copy;
  for (const step of path.slice(0, -1)) {
    if (at[step] === undefined || typeof at[step] !== 'object') at[step] = /^\d+$/.test(path[path.indexOf(step) + 1] ?? '') ? [] : {};
    at = at[step];
  }
  at[path.at(-1)!] = marker;
  return JSON.stringify(copy).replace(`"${marker}"`, raw);
}

const BAD_PARAMS = ['not-a-uuid', '%00', '..%2F..%2Fetc', 'x'.repeat(2000), '%7B%22%24gt%22%3A%22%22%7D', '__proto__', 'constructor', '%F0%28%8C%28', '00000000-0000-0000-0000-000000000000'];

const BAD_QUERIES = ['a[$gt]=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', `q=${'x'.repeat(5000)}`, 'limit=1e308', 'limit=-1', 'limit=Infinity', 'limit[]=1&limit[]=2', 'status=%00', '%E0%A4%A=1'];

interface Case {
  label: string;
  method: string;
  path: string;
  raw?: string;
}

function pathWith(op: Operation, params: Record<string, string>): string {
  return '/v1' + op.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? crypto.randomUUID());
}

function casesFor(id: string, op: Operation): Case[] {
  const cases: Case[] = [];
  const goodPath = pathWith(op, {});
  const bodySchema = op.request.body as Schema | undefined;
  const base = bodySchema ? sample(bodySchema) : undefined;
  const body = base === undefined ? undefined : JSON.stringify(base);
  cases.push({ label: `${id}: a plausible request`, method: op.method, path: goodPath, ...(body === undefined ? {} : { raw: body }) });

  for (const name of Object.keys((op.request.params as Schema | undefined)?.properties ?? {})) {
    for (const bad of BAD_PARAMS) cases.push({ label: `${id}: path ${name}=${bad.slice(0, 20)}`, method: op.method, path: pathWith(op, { [name]: bad }), ...(body === undefined ? {} : { raw: body }) });
  }
  for (const query of BAD_QUERIES) cases.push({ label: `${id}: ?${query.slice(0, 30)}`, method: op.method, path: `${goodPath}?${query}`, ...(body === undefined ? {} : { raw: body }) });
  for (const path of fieldPaths(op.request.query as Schema | undefined)) {
    for (const value of ['', '%00', '1e308', '-1', 'Infinity', '-Infinity', '1e309', 'NaN', 'x'.repeat(3000), '%7B%7D']) {
      cases.push({ label: `${id}: query ${path[0]}=${value.slice(0, 10)}`, method: op.method, path: `${goodPath}?${path[0]}=${value}` });
    }
  }
  if (bodySchema) {
    for (const [what, raw] of HOSTILE) cases.push({ label: `${id}: body = ${what}`, method: op.method, path: goodPath, raw });
    for (const path of fieldPaths(bodySchema)) {
      for (const [what, raw] of HOSTILE) {
        cases.push({ label: `${id}: ${path.join('.')} = ${what}`, method: op.method, path: goodPath, raw: withRaw(base, path, raw) });
      }
    }
  }
  return cases;
}

const statuses = new Map<number, number>();

const VAGUE = /^(The request is invalid\.?|.* is invalid)$/;

async function check(c: Case): Promise<string | null> {
  try {
    const res = await app.request(c.method, c.path, {
      key,
      ...(c.raw === undefined ? {} : { raw: c.raw, headers: { 'Content-Type': 'application/json' } }),
    });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status >= 500) return `${c.label}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
    if (res.status >= 400) {
      const body = res.body as Record<string, unknown>;
      if (typeof body !== 'object' || body === null || Object.keys(body).sort().join() !== 'error,message') {
        return `${c.label}: ${res.status} body is not {error, message}: ${JSON.stringify(body).slice(0, 200)}`;
      }
      if (typeof body.error !== 'string' || typeof body.message !== 'string' || VAGUE.test(body.message)) {
        return `${c.label}: ${res.status} says nothing: ${JSON.stringify(body)}`;
      }
    }
    return null;
  } catch (err) {
    return `${c.label}: ${(err as Error).message.slice(0, 300)} ${String((err as { cause?: unknown }).cause ?? "")}`;
  }
}

describe('fuzz from the registry', () => {
  // Over 5,000 requests (the export, the changes feed and a watch's filters each added as many as the search has
  // fields): two minutes and more on a busy machine.
  it('no input gets a 5xx, and every 4xx is {error, message} naming its cause', { timeout: 300_000 }, async () => {
    const cases = Object.entries(operations).flatMap(([id, op]) => casesFor(id, op as Operation));
    const failures: string[] = [];
    // A few at a time: quick on two cores, and concurrency of its own kind is part of the test.
    let next = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < cases.length) {
          const failure = await check(cases[next++]!);
          if (failure) failures.push(failure);
        }
      }),
    );
    expect(cases.length).toBeGreaterThan(3000);
    // The plausible requests reach their handlers, so the mutations test more than the validator.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
    expect(failures.slice(0, 30)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
