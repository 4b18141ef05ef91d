/**
 * Issue 39, finding 3: a provider's `Retry-After` pauses it for at most PROVIDER_MAX_PAUSE_SECONDS,
 * the catalog says until when, and the pause is the key's: a workspace calling with its own key is
 * not held by the service key's pause. Through the real server against a loopback People Data Labs;
 * the pause passes on a virtual clock, so no real time is spent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakePdl, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';
import { virtualClock } from '../../helpers/virtual-clock.ts';

let pdl: FakeProvider;
let app: TestApp;
const clock = virtualClock();

beforeAll(async () => {
  pdl = await startFakePdl(testWorld());
  app = await startTestApp(
    { PDL_API_KEY: pdl.key, PDL_URL: pdl.url, PROVIDER_KEY_SECRET: 'b'.repeat(64), PROVIDER_MAX_PAUSE_SECONDS: '120' },
    { clock },
  );
});

afterAll(async () => {
  await app.close();
  await pdl.close();
});

const enrich = (apiKey: string, email: string) =>
  app.request('POST', '/v1/api/enrich', { key: apiKey, body: { email, providerOrder: ['pdl'], onlyListed: true, forceRefresh: true } });
const pdlEntry = async () => (await app.request('GET', '/v1/api/providers')).body.providers.find((p: { id: string }) => p.id === 'pdl');

describe('a provider asking for a pause of years', () => {
  it('is paused for PROVIDER_MAX_PAUSE_SECONDS at most, shown in the catalog, for the service key alone', async () => {
    expect(await pdlEntry()).not.toHaveProperty('pausedUntil');
    const first = await app.workspace();
    pdl.next({ status: 429, retryAfter: '999999999' });
    const refused = await enrich(first.apiKey, 'carla.mendes@globex.com');
    expect(refused.status).toBe(503);
    expect(pdl.requests).toHaveLength(1);

    const pausedAt = clock.now();
    const paused = await pdlEntry();
    expect(Date.parse(paused.pausedUntil)).toBe(pausedAt + 120_000);

    // Meanwhile the service key is not called at all, for any workspace.
    const second = await app.workspace();
    expect((await enrich(second.apiKey, 'ana.souza@acme.com.br')).status).toBe(503);
    expect(pdl.requests).toHaveLength(1);

    // A workspace's own key was never asked to wait: its calls go through.
    const own = await app.workspace();
    pdl.accept('own-pdl-key');
    await app.services.providerKeys.set(own.workspaceId, 'pdl', 'own-pdl-key');
    const withOwnKey = await enrich(own.apiKey, 'carla.mendes@globex.com');
    expect(withOwnKey.status).toBe(200);
    expect(withOwnKey.body.record.fullName).toBe('Carla Mendes');
    expect(pdl.requests.at(-1)!.headers['x-api-key']).toBe('own-pdl-key');

    // Once the cap has passed, the service key is called again and the catalog shows no pause.
    clock.advance(120_000);
    expect(await pdlEntry()).not.toHaveProperty('pausedUntil');
    const after = await enrich(second.apiKey, 'ana.souza@acme.com.br');
    expect(after.status).toBe(200);
    expect(after.body.record.fullName).toBe('Ana Souza');
    expect(pdl.requests.at(-1)!.headers['x-api-key']).toBe(pdl.key);
  });

  it('PROVIDER_MAX_PAUSE_SECONDS outside 1..86400 stops the server at start, naming the variable', async () => {
    await expect(startTestApp({ PROVIDER_MAX_PAUSE_SECONDS: '0' })).rejects.toThrow(/PROVIDER_MAX_PAUSE_SECONDS/);
  });
});
