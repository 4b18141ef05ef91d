/**
 * A key's last use: written on its first use, then at most once a minute, so a busy key costs
 * no write per request; a revoked key is not marked used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys, LAST_USED_RESOLUTION_MS, type ApiKeyDoc } from '../../../server/auth/keys.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';

let app: TestApp;
// "Now" is the real now (keys list newest first by creation, which uses the real clock), moved
// forward by the test.
let now = Date.now();
let keys: ApiKeys;

beforeAll(async () => {
  app = await startTestApp();
  // The server's own repository over the same store, with a clock the test moves; no cache, so
  // every lookup reaches the store as a busy key's would after the cache expires.
  keys = new ApiKeys(app.services.store, 0, () => now);
});
afterAll(() => app.close());

const stored = async (keyId: string) =>
  (await app.services.store.collection<ApiKeyDoc>('apiKeys').findOne({ _id: keyId }))!.lastUsedAt?.toISOString() ?? null;

describe('last used', () => {
  it('is written on first use, then not again within a minute, then again after it', async () => {
    const { workspaceId } = await app.workspace();
    const { keyId, apiKey } = await keys.create(workspaceId, undefined, 'Busy key');
    expect(await stored(keyId)).toBeNull();

    expect(await keys.authenticate(apiKey)).toMatchObject({ _id: keyId });
    const first = new Date(now).toISOString();
    await eventually(async () => expect(await stored(keyId)).toBe(first), { message: 'the first use to be written' });

    now += LAST_USED_RESOLUTION_MS / 2;
    for (let i = 0; i < 20; i++) await keys.authenticate(apiKey);
    // Another process (a second instance) has not written either; the stored time stays.
    expect(await stored(keyId)).toBe(first);

    now += LAST_USED_RESOLUTION_MS;
    await keys.authenticate(apiKey);
    const later = new Date(now).toISOString();
    await eventually(async () => expect(await stored(keyId)).toBe(later), { message: 'the use a minute later to be written' });
    expect((await keys.list(workspaceId)).find((key) => key.keyId === keyId)).toMatchObject({ keyId, name: 'Busy key', lastUsedAt: later });
  });

  it('a second instance does not write again what the first wrote within the minute', async () => {
    const { workspaceId } = await app.workspace();
    const { keyId, apiKey } = await keys.create(workspaceId);
    const other = new ApiKeys(app.services.store, 0, () => now);
    await keys.authenticate(apiKey);
    const first = new Date(now).toISOString();
    await eventually(async () => expect(await stored(keyId)).toBe(first), { message: 'the first use to be written' });
    now += 1_000;
    await other.authenticate(apiKey);
    // The other instance's conditional write finds a use newer than a minute and changes nothing
    // (the embedded store applies a write in memory when it is made, so this reads after it).
    expect(await stored(keyId)).toBe(first);
  });

  it('a revoked key is refused and not marked used', async () => {
    const { workspaceId } = await app.workspace();
    const { keyId, apiKey } = await keys.create(workspaceId);
    await keys.revoke(workspaceId, keyId);
    expect(await keys.authenticate(apiKey)).toBeNull();
    expect(await stored(keyId)).toBeNull();
  });

  it('the server records a use of the key a request came with', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    const before = Date.now();
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
    await eventually(async () => {
      const [listed] = await app.services.keys.list(workspaceId);
      expect(Date.parse(listed!.lastUsedAt ?? '0')).toBeGreaterThanOrEqual(before);
    }, { message: 'the request to be recorded as a use' });
  });
});
