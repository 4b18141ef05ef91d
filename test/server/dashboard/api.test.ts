/**
 * The dashboard's JSON API: the registry's operations under /dashboard as the signed-in session,
 * never with a key, never from another origin; key management there and nowhere else; the ledger
 * page by page and consumption per day (also on /v1 with a key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { signIn } from '../../helpers/dashboard.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function signedIn(plan: 'trial' | 'none' = 'trial') {
  const { workspaceId, apiKey } = await app.workspace(plan);
  const cookie = await signIn(app, workspaceId);
  const as = (headers: Record<string, string> = {}) => ({ headers: { Cookie: cookie, Origin: app.url, ...headers } });
  return { workspaceId, apiKey, cookie, as };
}

describe('the registry under /dashboard', () => {
  it('runs operations as the session, with the same answers and rate-limit headers as /v1', async () => {
    const { apiKey, as } = await signedIn();
    const viaDashboard = await app.request('GET', '/dashboard/api/credits', as());
    const viaKey = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(viaDashboard.status).toBe(200);
    expect(viaDashboard.body).toEqual(viaKey.body);
    expect(viaDashboard.headers.get('ratelimit-policy')).toBeTruthy();
  });

  it('takes the session cookie only: a key (or a key beside the cookie) is refused', async () => {
    const { apiKey, as } = await signedIn();
    expect((await app.request('GET', '/dashboard/api/credits', { key: apiKey })).status).toBe(401);
    const both = await app.request('GET', '/dashboard/api/credits', { key: apiKey, ...as() });
    expect(both.status).toBe(401);
    expect(both.body.message).toMatch(/session cookie, never an API key/);
  });

  it('refuses state changes from another origin, or that name none', async () => {
    const { cookie } = await signedIn();
    const refused: Array<Record<string, string>> = [{ Origin: 'https://evil.example' }, { Origin: 'null' }, {}, { 'Sec-Fetch-Site': 'cross-site' }];
    for (const headers of refused) {
      const res = await app.request('POST', '/dashboard/api/keys', { headers: { Cookie: cookie, ...headers }, body: { name: 'x' } });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.error).toBe('cross_origin');
    }
    const sameSite = await app.request('POST', '/dashboard/api/keys', { headers: { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin' }, body: { name: 'ok' } });
    expect(sameSite.status).toBe(201);
    // A form on a no-referrer page: `Origin: null`, vouched for by Sec-Fetch-Site.
    const form = await app.request('POST', '/dashboard/api/keys', { headers: { Cookie: cookie, Origin: 'null', 'Sec-Fetch-Site': 'same-origin' }, body: { name: 'form' } });
    expect(form.status).toBe(201);
    const forged = await app.request('POST', '/dashboard/api/keys', { headers: { Cookie: cookie, Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }, body: { name: 'x' } });
    expect(forged.status).toBe(403);
  });

  it('unknown API paths are JSON 404s', async () => {
    const { as } = await signedIn();
    const res = await app.request('GET', '/dashboard/api/nothing', as());
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
  });

  it('a workspace without a plan reads its credits and keys, and is told what needs a plan', async () => {
    const { as } = await signedIn('none');
    expect((await app.request('GET', '/dashboard/api/credits', as())).status).toBe(200);
    expect((await app.request('GET', '/dashboard/api/keys', as())).status).toBe(200);
    const campaigns = await app.request('GET', '/dashboard/api/prospecting/campaigns', as());
    expect(campaigns.status).toBe(402);
    expect(campaigns.body.error).toBe('plan_required');
  });
});

describe('API keys', () => {
  it('created with a name (the secret once), listed without it, working at once, revoked at once', async () => {
    const { as } = await signedIn();
    const created = await app.request('POST', '/dashboard/api/keys', { ...as(), body: { name: '  CRM sync ' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'CRM sync', apiKey: expect.stringMatching(/^service_live_/) });
    expect(created.body.apiKey.startsWith(created.body.hint.replace('…', ''))).toBe(true);
    // The secret is in this answer: no cache may keep it, nor any other dashboard answer.
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect((await app.request('GET', '/dashboard/api/credits', as())).headers.get('cache-control')).toBe('no-store');
    expect((await app.request('GET', '/dashboard/api/credits')).headers.get('cache-control')).toBe('no-store');
    expect((await app.request('GET', '/v1/api/credits', { key: created.body.apiKey })).status).toBe(200);

    const listed = await app.request('GET', '/dashboard/api/keys', as());
    expect(JSON.stringify(listed.body)).not.toContain(created.body.apiKey);
    const row = listed.body.keys.find((k: { keyId: string }) => k.keyId === created.body.keyId);
    expect(row).toMatchObject({ name: 'CRM sync', revokedAt: null, lastUsedAt: expect.any(String) });

    const revoked = await app.request('DELETE', `/dashboard/api/keys/${created.body.keyId}`, as());
    expect(revoked.status).toBe(200);
    expect((await app.request('GET', '/v1/api/credits', { key: created.body.apiKey })).status).toBe(401);
    const again = await app.request('DELETE', `/dashboard/api/keys/${created.body.keyId}`, as());
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('already_revoked');
  });

  it('of two tabs revoking one key, one succeeds and the other is told it is already revoked', async () => {
    const { as } = await signedIn();
    const { body } = await app.request('POST', '/dashboard/api/keys', { ...as(), body: { name: 'twice' } });
    const both = await Promise.all([1, 2].map(() => app.request('DELETE', `/dashboard/api/keys/${body.keyId}`, as())));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('names are required, trimmed and bounded; bad ids are 400s; another workspace’s key is not found', async () => {
    const { as } = await signedIn();
    for (const name of ['', '   ', 'x'.repeat(101)]) {
      const res = await app.request('POST', '/dashboard/api/keys', { ...as(), body: { name } });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.message).toMatch(/name/);
    }
    expect((await app.request('DELETE', '/dashboard/api/keys/not-a-uuid', as())).status).toBe(400);
    const other = await signedIn();
    const { body } = await app.request('POST', '/dashboard/api/keys', { ...other.as(), body: { name: 'theirs' } });
    expect((await app.request('DELETE', `/dashboard/api/keys/${body.keyId}`, as())).status).toBe(404);
    expect((await app.request('GET', '/v1/api/credits', { key: body.apiKey })).status).toBe(200);
  });

  it('an API key cannot list, create or revoke keys', async () => {
    const { apiKey, workspaceId } = await signedIn();
    const keyId = (await app.services.keys.list(workspaceId))[0]!.keyId;
    for (const [method, path, body] of [
      ['GET', '/v1/api/keys', undefined],
      ['POST', '/v1/api/keys', { name: 'minted' }],
      ['DELETE', `/v1/api/keys/${keyId}`, undefined],
    ] as const) {
      const res = await app.request(method, path, { key: apiKey, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toBe('dashboard_only');
    }
    expect((await app.services.keys.list(workspaceId)).map((k) => k.revokedAt)).toEqual([null]);
  });
});

describe('the ledger and consumption', () => {
  it('pages the ledger newest first, filtered by operation, on /v1 and /dashboard alike', async () => {
    const { workspaceId, apiKey, as } = await signedIn();
    for (let i = 0; i < 5; i++) await app.services.credits.debit(workspaceId, 1, i % 2 ? 'lookupCnpjBatch' : 'enrichPerson', `debit ${i}`);
    const first = await app.request('GET', '/v1/api/credits/ledger?limit=2', { key: apiKey });
    expect(first.status).toBe(200);
    expect(first.body.movements.map((m: { detail: string }) => m.detail)).toEqual(['debit 4', 'debit 3']);
    const second = await app.request('GET', `/v1/api/credits/ledger?limit=2&before=${first.body.nextBefore}`, { key: apiKey });
    expect(second.body.movements.map((m: { detail: string }) => m.detail)).toEqual(['debit 2', 'debit 1']);
    const last = await app.request('GET', `/dashboard/api/credits/ledger?limit=2&before=${second.body.nextBefore}`, as());
    expect(last.body.movements.map((m: { detail: string }) => m.detail)).toEqual(['debit 0', 'Free trial credits']);
    expect(last.body.nextBefore).toBeNull();

    const filtered = await app.request('GET', '/v1/api/credits/ledger?operation=lookupCnpjBatch', { key: apiKey });
    expect(filtered.body.movements.map((m: { detail: string }) => m.detail)).toEqual(['debit 3', 'debit 1']);
    for (const query of ['limit=0', 'limit=201', 'before=0', 'before=x', 'operation=']) {
      expect((await app.request('GET', `/v1/api/credits/ledger?${query}`, { key: apiKey })).status, query).toBe(400);
    }
  });

  it('sums consumption per UTC day, net of refunds, without grants or expired trial credits', async () => {
    const { workspaceId, apiKey } = await signedIn();
    await app.services.credits.debit(workspaceId, 7, 'enrichPerson', 'spent');
    await app.services.credits.refund(workspaceId, 2, 'enrichPerson', 'given back');
    await app.services.credits.credit(workspaceId, 100, 'grant', 'a grant');
    const usage = await app.request('GET', '/v1/api/credits/usage', { key: apiKey });
    expect(usage.status).toBe(200);
    expect(usage.body.days).toHaveLength(30);
    expect(usage.body.days.at(-1)).toEqual({ date: new Date().toISOString().slice(0, 10), consumed: 5 });
    expect(usage.body.days.slice(0, -1).every((d: { consumed: number }) => d.consumed === 0)).toBe(true);
    expect((await app.request('GET', '/v1/api/credits/usage?days=7', { key: apiKey })).body.days).toHaveLength(7);
    expect((await app.request('GET', '/v1/api/credits/usage?days=91', { key: apiKey })).status).toBe(400);
  });
});
