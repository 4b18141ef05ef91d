import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_PREFIX, hashApiKey } from '../../../server/auth/key-format.ts';
import type { ApiKeyDoc } from '../../../server/auth/keys.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('API keys', () => {
  it('have the service_live_ prefix and at least 32 base62 characters; only a hash is stored', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    expect(apiKey).toMatch(/^service_live_[0-9A-Za-z]{32,}$/);
    const stored = await app.services.store.collection<ApiKeyDoc>('apiKeys').find({ workspaceId }).toArray();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.hash).toBe(hashApiKey(apiKey));
    expect(JSON.stringify(stored)).not.toContain(apiKey.slice(KEY_PREFIX.length));
  });

  it('401 with WWW-Authenticate for a missing, malformed, unknown or revoked key', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    const keyId = (await app.services.keys.list(workspaceId))[0]!.keyId;
    await app.services.keys.revoke(workspaceId, keyId);
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: 'Basic dXNlcjpwYXNz' },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer not-a-key' },
      { Authorization: `Bearer ${KEY_PREFIX}${'A'.repeat(40)}` },
      { Authorization: `Bearer ${apiKey}` },
    ];
    for (const headers of attempts) {
      const res = await app.request('GET', '/v1/api/credits', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="prospecta"/);
    }
  });

  it('revocation takes effect at once, even for a key that was just used', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
    const keyId = (await app.services.keys.list(workspaceId))[0]!.keyId;
    expect((await app.services.keys.revoke(workspaceId, keyId)).outcome).toBe('revoked');
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(401);
  });

  it('a workspace cannot revoke another workspace’s key', async () => {
    const a = await app.workspace();
    const b = await app.workspace();
    const keyOfA = (await app.services.keys.list(a.workspaceId))[0]!.keyId;
    expect((await app.services.keys.revoke(b.workspaceId, keyOfA)).outcome).toBe('not_found');
    expect((await app.request('GET', '/v1/api/credits', { key: a.apiKey })).status).toBe(200);
  });

  it('403 insufficient_scope for a valid key without the operation’s scope', async () => {
    const { workspaceId } = await app.workspace();
    const { apiKey } = await app.services.keys.create(workspaceId, ['outreach:read']);
    const res = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'insufficient_scope', message: expect.stringContaining('credits:read') });
    expect(res.headers.get('www-authenticate')).toContain('insufficient_scope');
  });
});

describe('workspace isolation', () => {
  it('each key sees only its own workspace’s credits', async () => {
    const a = await app.workspace();
    const b = await app.workspace();
    await app.services.credits.debit(a.workspaceId, 7, 'test', 'spent by A');
    const seenByA = (await app.request('GET', '/v1/api/credits', { key: a.apiKey })).body;
    const seenByB = (await app.request('GET', '/v1/api/credits', { key: b.apiKey })).body;
    expect(seenByA.balance).toBe(493);
    expect(seenByB.balance).toBe(500);
    expect(JSON.stringify(seenByB)).not.toContain('spent by A');
  });
});
