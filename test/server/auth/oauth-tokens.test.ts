/**
 * OAuth access tokens from a real authorization server (oidc-provider, client credentials: each
 * client is a subject) on /v1: sign-up, charging, scopes, removal, and the rate limit per subject.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemberDoc } from '../../../server/auth/members.ts';
import { runCommand } from '../../../server/cli/control.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import type { WorkspaceDoc } from '../../../server/credits/workspaces.ts';
import { SCOPES } from '../../../shared/operations/types.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startAuthorizationServer, type AuthorizationServer } from '../../helpers/authorization-server.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { captureLog } from '../../helpers/log-capture.ts';

const PUBLIC_URL = 'https://prospecta.example';
const acme = makeCnpj('11222333');
const logs = captureLog();
const issued: string[] = [];

let as: AuthorizationServer;
let app: TestApp;

async function token(clientId: string, scopes: readonly string[] = SCOPES): Promise<string> {
  const value = await as.token(clientId, scopes);
  issued.push(value);
  return value;
}

const member = (sub: string) => app.services.store.collection<MemberDoc>('members').findOne({ iss: as.issuer, sub });

beforeAll(async () => {
  as = await startAuthorizationServer({
    resource: `${PUBLIC_URL}/mcp`,
    clients: {
      alice: { claims: { email: 'alice@example.com', name: 'Alice Example' } },
      bob: { claims: { name: 'Bob Builder' } },
      carol: {},
      dave: {},
      erin: {},
    },
  });
  app = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: as.issuer }, { log: logs.log });
  await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(acme));
});
afterAll(() => app.close());

describe('a token of a new subject (automatic sign-up)', () => {
  it('gets a trial workspace named from its email, works on /v1 and is charged there', async () => {
    const alice = await token('alice');
    const before = await app.services.workspaces.count();

    const credits = await app.request('GET', '/v1/api/credits', { key: alice });
    expect(credits.status).toBe(200);
    expect(credits.body).toMatchObject({ balance: 500, consumed: 0, plan: { name: 'trial' } });
    expect(await app.services.workspaces.count()).toBe(before + 1);

    const link = await member('alice');
    expect(link).toMatchObject({ source: 'signup', ready: true, removedAt: null });
    const workspace = (await app.services.workspaces.get(link!.workspaceId)) as WorkspaceDoc;
    expect(workspace.name).toBe('alice@example.com');
    expect(workspace.plan.expiresAt!.getTime() - workspace.createdAt.getTime()).toBe(7 * 86_400_000);

    const lookup = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: alice, body: { cnpjs: [acme] } });
    expect(lookup.status).toBe(200);
    expect(lookup.body.results).toHaveLength(1);
    const after = await app.request('GET', '/v1/api/credits', { key: alice });
    expect(after.body).toMatchObject({ balance: 499, consumed: 1 });
    expect(after.body.movements.map((m: { operation: string; amount: number }) => [m.operation, m.amount])).toEqual([
      ['lookupCnpjBatch', -1],
      ['trial_grant', 500],
    ]);
  });

  it('is named from `name` without an email, and from the subject without either', async () => {
    await app.request('GET', '/v1/api/credits', { key: await token('bob') });
    await app.request('GET', '/v1/api/credits', { key: await token('carol') });
    expect((await app.services.workspaces.get((await member('bob'))!.workspaceId))!.name).toBe('Bob Builder');
    expect((await app.services.workspaces.get((await member('carol'))!.workspaceId))!.name).toBe('carol');
  });

  it('concurrent first requests make one workspace with one trial grant', async () => {
    const dave = await token('dave');
    const before = await app.services.workspaces.count();
    const answers = await Promise.all(Array.from({ length: 12 }, () => app.request('GET', '/v1/api/credits', { key: dave })));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
    expect(await app.services.workspaces.count()).toBe(before + 1);
    const { body } = await app.request('GET', '/v1/api/credits', { key: dave });
    expect(body.balance).toBe(500);
    expect(body.movements).toHaveLength(1);
  });

  it('a second token of the subject acts for the same workspace', async () => {
    const first = await token('alice', ['credits:read']);
    const second = await token('alice', ['credits:read']);
    expect(first).not.toBe(second);
    const a = await app.request('GET', '/v1/api/credits', { key: first });
    const b = await app.request('GET', '/v1/api/credits', { key: second });
    expect(a.body.movements).toEqual(b.body.movements);
    expect(b.body.balance).toBe(499);
  });
});

describe('scopes', () => {
  it('come from the token: an operation outside them is 403 insufficient_scope naming the scope', async () => {
    const reader = await token('alice', ['credits:read']);
    expect((await app.request('GET', '/v1/api/credits', { key: reader })).status).toBe(200);
    const res = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: reader, body: { cnpjs: [acme] } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'insufficient_scope', message: 'This operation needs the search:write scope.' });
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer realm="prospecta", error="insufficient_scope", scope="search:write", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`,
    );
  });

  it('open operations need none', async () => {
    const res = await app.request('GET', '/v1/health', { key: await token('alice', ['credits:read']) });
    expect(res.status).toBe(200);
  });
});

describe('removal of a signed-up member', () => {
  it('refuses its tokens at once with 403 no_workspace, and does not sign it up again', async () => {
    const erin = await token('erin', ['credits:read']);
    expect((await app.request('GET', '/v1/api/credits', { key: erin })).status).toBe(200);
    const { workspaceId } = (await member('erin'))!;
    const count = await app.services.workspaces.count();

    const removed = await runCommand(app.services, { command: 'member remove', args: { workspace: workspaceId, subject: 'erin' } });
    expect(removed).toEqual({ ok: true, result: { workspaceId, issuer: as.issuer, subject: 'erin', removed: true, revokedKeys: [] } });

    for (const key of [erin, await token('erin', ['credits:read'])]) {
      const res = await app.request('GET', '/v1/api/credits', { key });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'no_workspace', message: 'This account’s membership of its workspace was removed.' });
    }
    expect(await app.services.workspaces.count()).toBe(count);

    const readded = await runCommand(app.services, { command: 'member add', args: { workspace: workspaceId, subject: 'erin' } });
    expect(readded).toMatchObject({ ok: true, result: { workspaceId, subject: 'erin', removedAt: null } });
    expect((await app.request('GET', '/v1/api/credits', { key: erin })).status).toBe(200);
  });
});

describe('the logs', () => {
  it('hold no token, no subject and no e-mail address', () => {
    expect(issued.length).toBeGreaterThan(5);
    const text = logs.text();
    expect(text).toContain('"msg":"request"');
    for (const value of issued) {
      for (const part of value.split('.')) expect(text).not.toContain(part);
    }
    expect(text).not.toContain('alice@example.com');
    expect(text).not.toMatch(/"(sub|subject)":/);
  });
});

describe('the rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ PUBLIC_URL, OAUTH_ISSUER: as.issuer, RATE_LIMIT_PER_MINUTE: '4' });
  });
  afterAll(() => limited.close());

  it('counts per subject: two tokens of one subject share one quota, another subject has its own', async () => {
    const one = await as.token('carol', ['credits:read']);
    const two = await as.token('carol', ['credits:read']);
    const statuses: number[] = [];
    for (const key of [one, two, one, two, one]) statuses.push((await limited.request('GET', '/v1/api/credits', { key })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await limited.request('GET', '/v1/api/credits', { key: two })).status).toBe(429);
    expect((await limited.request('GET', '/v1/api/credits', { key: await as.token('bob', ['credits:read']) })).status).toBe(200);
  });
});
