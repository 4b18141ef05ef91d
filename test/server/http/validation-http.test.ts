/**
 * Every schema rule of the registry, sent over real HTTP: each violation is a 400
 * `invalid_request` whose message names the field, and each valid input gets past validation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type OperationId } from '../../../shared/operations/index.ts';
import type { Operation } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { signIn } from '../../helpers/dashboard.ts';
import { validationCases, validInputs, type ValidInput } from './validation-cases.ts';

let app: TestApp;
let key: string;
/** The dashboard-only operations (keys) answer a signed-in session alone. */
let session: Record<string, string>;

beforeAll(async () => {
  app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  const workspace = await app.workspace('active');
  key = workspace.apiKey;
  session = { Cookie: await signIn(app, workspace.workspaceId), Origin: app.url };
});
afterAll(() => app.close());

function send(op: OperationId, input: ValidInput) {
  const { method, path } = operations[op];
  const params = (input.params ?? {}) as Record<string, unknown>;
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) {
    for (const v of Array.isArray(value) ? value : [value]) query.append(name, String(v));
  }
  const qs = query.size ? `?${query}` : '';
  const hasBody = 'body' in input && input.body !== undefined;
  const body = hasBody ? { body: input.body } : {};
  if ((operations[op] as Operation).access === 'dashboard') return app.request(method, `/dashboard${url}${qs}`, { headers: session, ...body });
  return app.request(method, `/v1${url}${qs}`, { key, ...body });
}

describe('schema violations over HTTP', () => {
  it.each(validationCases.map((c) => [`${c.op} ${c.part}: ${c.field}`, c] as const))('%s', async (_name, c) => {
    const base = validInputs[c.op] ?? {};
    const res = await send(c.op, { ...base, [c.part]: c.input });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.message).toContain(c.field);
  });
});

describe('valid inputs pass validation', () => {
  it.each(Object.entries(validInputs) as Array<[OperationId, ValidInput]>)('%s', async (op, input) => {
    const res = await send(op, input);
    expect(res.status, JSON.stringify(res.body)).not.toBe(400);
    // AI answers 503 here (no model is configured); nothing else may be a server error.
    if (res.status >= 500) expect(res.body.error).toBe('ai_unavailable');
  });
});
