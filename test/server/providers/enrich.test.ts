/**
 * Cascade enrichment through the real server against loopback Apollo, Hunter and People Data
 * Labs: which provider is called when, first value wins, charging only for data, failures as
 * outcomes, 503 when all fail, budgets, and workspace keys.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { virtualClock } from '../../helpers/virtual-clock.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';

let apollo: FakeProvider;
let hunter: FakeProvider;
let pdl: FakeProvider;
let app: TestApp;
// Providers' Retry-After and backoff waits pass on it, asked for but never spent.
const clock = virtualClock();

const SECRET = 'a'.repeat(64);

function providerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    APOLLO_API_KEY: apollo.key,
    APOLLO_URL: apollo.url,
    HUNTER_API_KEY: hunter.key,
    HUNTER_URL: hunter.url,
    HUNTER_VERIFIER_URL: hunter.url,
    PDL_API_KEY: pdl.key,
    PDL_URL: pdl.url,
    // Every PDL answer must come within this, the normal ones too: 1 s, however busy the machine.
    PDL_TIMEOUT_MS: '1000',
    PROVIDER_KEY_SECRET: SECRET,
    ...extra,
  };
}

beforeAll(async () => {
  const world = testWorld();
  [apollo, hunter, pdl] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world)]);
  app = await startTestApp(providerEnv(), { clock });
});

afterAll(async () => {
  await app.close();
  await Promise.all([apollo.close(), hunter.close(), pdl.close()]);
});

beforeEach(() => {
  for (const fake of [apollo, hunter, pdl]) fake.reset();
});

const balance = async (key: string) => (await app.request('GET', '/v1/api/credits', { key })).body.balance as number;

describe('GET /api/providers', () => {
  it('lists every declared provider with its limits, and the fields the configured ones offer', async () => {
    const res = await app.request('GET', '/v1/api/providers');
    expect(res.status).toBe(200);
    const ids = res.body.providers.map((p: { id: string }) => p.id);
    expect(ids).toEqual(expect.arrayContaining(['receita_federal', 'brasilapi', 'apollo', 'hunter', 'hunter_verifier', 'pdl']));
    expect(res.body.providers).toContainEqual(
      expect.objectContaining({
        id: 'apollo',
        configured: true,
        cost: 2,
        keyVariable: 'APOLLO_API_KEY',
        limits: { perSecond: 5, perMinute: 50, maxConcurrent: 5 },
      }),
    );
    expect(res.body.enrichmentFields).toEqual(expect.arrayContaining(['email', 'emailStatus', 'title', 'companyName']));
  });

  it('says a provider without its key is not configured, and offers only what configured ones give', async () => {
    const bare = await startTestApp();
    try {
      const res = await bare.request('GET', '/v1/api/providers');
      expect(res.body.providers).toContainEqual(expect.objectContaining({ id: 'hunter', configured: false }));
      expect(res.body.enrichmentFields).not.toContain('email');
      expect(res.body.enrichmentFields).toContain('companyName');
    } finally {
      await bare.close();
    }
  });
});

describe('POST /api/enrich', () => {
  it('walks the cascade by cost: Hunter finds the email and Hunter status, Apollo fills the rest, PDL is never needed', async () => {
    const { apiKey } = await app.workspace();
    const before = await balance(apiKey);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'https://www.acme.com.br/about', goalFields: ['email', 'emailStatus', 'title', 'seniority'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.record).toMatchObject({ email: 'ana.souza@acme.com.br', emailStatus: 'verified', title: 'Head of Sales', seniority: 'head' });
    expect(res.body.sources).toMatchObject({ email: 'hunter', emailStatus: 'hunter', title: 'hunter', seniority: 'apollo' });
    const tried = Object.fromEntries(res.body.providers.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]));
    expect(tried).toMatchObject({ hunter: 'found', apollo: 'found' });
    expect(tried.pdl).toBeUndefined();
    expect(pdl.requests).toHaveLength(0);
    expect(res.body.creditsCharged).toBe(3); // Hunter 1 + Apollo 2
    expect(before - (await balance(apiKey))).toBe(3);
    // The domain reached Hunter cleaned; the key went in the header, not the URL.
    expect(hunter.requests[0]!.query.get('domain')).toBe('acme.com.br');
    expect(hunter.requests[0]!.query.get('api_key')).toBeNull();
  });

  it('calls nobody for fields already known, and stops once the wanted fields are filled', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'] },
    });
    expect(res.body.record.email).toBe('ana.souza@acme.com.br');
    expect(apollo.requests).toHaveLength(0);
    expect(pdl.requests).toHaveLength(0);
    expect(res.body.missing).toEqual([]);
  });

  it('an email is verified only when a verifier said so: accept_all stays accept_all', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { email: 'bruno@acme.com.br', goalFields: ['emailStatus'], providerOrder: ['hunter_verifier'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.record.emailStatus).toBe('accept_all');
    expect(res.body.sources.emailStatus).toBe('hunter_verifier');
  });

  it('follows providerOrder; with onlyListed, calls nobody else', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', providerOrder: ['pdl'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.providers.map((a: { provider: string }) => a.provider)).toEqual(['pdl']);
    expect(res.body.record).toMatchObject({ fullName: 'Carla Mendes', companyDomain: 'globex.com' });
    expect(res.body.creditsCharged).toBe(3);
    expect(apollo.requests).toHaveLength(0);
  });

  it('charges nothing when nobody has the person, and says so per provider', async () => {
    const { apiKey } = await app.workspace();
    const before = await balance(apiKey);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { email: 'nobody@nowhere.example', goalFields: ['fullName', 'title'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.creditsCharged).toBe(0);
    expect(res.body.providers.length).toBeGreaterThan(0);
    for (const attempt of res.body.providers) expect(attempt.outcome).not.toBe('found');
    expect(await balance(apiKey)).toBe(before);
  });

  it('a failing provider is an outcome; the others still answer and only they are charged', async () => {
    const { apiKey } = await app.workspace();
    apollo.next({ status: 500 }, 3);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { linkedinUrl: 'https://www.linkedin.com/in/diego-alves', providerOrder: ['apollo', 'pdl'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    const byProvider = Object.fromEntries(res.body.providers.map((a: { provider: string }) => [a.provider, a]));
    expect(byProvider.apollo).toMatchObject({ outcome: 'failed', cost: 0 });
    expect(byProvider.apollo.error).toMatch(/Apollo/);
    expect(byProvider.pdl).toMatchObject({ outcome: 'found', cost: 3 });
    expect(res.body.creditsCharged).toBe(3);
  });

  it('answers 503 provider_unavailable when every provider failed, and charges nothing', async () => {
    const { apiKey } = await app.workspace();
    const before = await balance(apiKey);
    pdl.next({ status: 401 });
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { linkedinUrl: 'https://www.linkedin.com/in/ana-souza', providerOrder: ['pdl'], onlyListed: true },
    });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('provider_unavailable');
    expect(res.body.message).toMatch(/People Data Labs/);
    expect(await balance(apiKey)).toBe(before);
  });

  it.each([
    ['hangs past its timeout', { hang: true }],
    ['drops the connection', { reset: true }],
    ['answers 503', { status: 503 }],
  ] as const)('a provider that %s is failed for that call and the cascade moves on', async (_, fault) => {
    // Its own server: these failures would open the shared PDL circuit breaker for later tests.
    const own = await startTestApp(providerEnv());
    const { apiKey } = await own.workspace();
    pdl.next(fault, 3); // the first attempt and both retries
    const res = await own.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { linkedinUrl: 'https://www.linkedin.com/in/ana-souza', goalFields: ['fullName'], providerOrder: ['pdl', 'apollo'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.providers).toEqual([
      expect.objectContaining({ provider: 'pdl', outcome: 'failed', cost: 0, error: expect.stringMatching(/People Data Labs/) }),
      expect.objectContaining({ provider: 'apollo', outcome: 'found', cost: 2 }),
    ]);
    expect(res.body.record.fullName).toBe('Ana Souza');
    expect(pdl.requests).toHaveLength(3);
    await own.close();
  });

  it('a client that leaves before the answer is not charged for data it never got, and a finished one exactly once', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    const before = await balance(apiKey);
    // Longer than any wait below, so the answer cannot beat the hang-up however slow the machine.
    apollo.latencyMs = 30_000;
    try {
      const controller = new AbortController();
      const request = fetch(`${app.url}/v1/api/enrich`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'carla.mendes@globex.com', providerOrder: ['apollo'], onlyListed: true }),
        signal: controller.signal,
      }).catch(() => null);
      await eventually(() => expect(apollo.requests).toHaveLength(1), { message: 'the call to Apollo' });
      controller.abort();
      await request;
      await eventually(() => expect(apollo.cancelled).toBe(1), { message: 'Apollo to see its call cancelled' });
    } finally {
      apollo.latencyMs = 0;
    }
    expect(await balance(apiKey)).toBe(before);
    await app.request('POST', '/v1/api/enrich', { key: apiKey, body: { email: 'carla.mendes@globex.com', providerOrder: ['apollo'], onlyListed: true } });
    const movements = (await app.services.credits.view(workspaceId))!.movements.filter((m) => m.amount < 0);
    expect(movements.map((m) => m.amount)).toEqual([-2]);
  });

  it('garbage from a provider is a failure, not a 500', async () => {
    const { apiKey } = await app.workspace();
    hunter.next({ garbage: true });
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { fullName: 'Ana Souza', companyDomain: 'acme.com.br', goalFields: ['email'], providerOrder: ['hunter'], onlyListed: true },
    });
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('provider_unavailable');
  });

  it('waits out a 429 with Retry-After and then gets the answer', async () => {
    const { apiKey } = await app.workspace();
    pdl.next({ status: 429, retryAfter: '1' });
    clock.waits.length = 0;
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { email: 'carla.mendes@globex.com', providerOrder: ['pdl'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.record.fullName).toBe('Carla Mendes');
    expect(pdl.requests).toHaveLength(2);
    expect(clock.waits).toEqual([1000]);
  });

  it('maxCredits skips providers that would go over the budget, naming the reason', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes', providerOrder: ['pdl', 'apollo'], onlyListed: true, maxCredits: 2 },
    });
    expect(res.status).toBe(200);
    const byProvider = Object.fromEntries(res.body.providers.map((a: { provider: string }) => [a.provider, a]));
    expect(byProvider.pdl).toMatchObject({ outcome: 'skipped', error: 'over the credit budget' });
    expect(byProvider.apollo).toMatchObject({ outcome: 'found', cost: 2 });
    expect(pdl.requests).toHaveLength(0);
    expect(res.body.creditsCharged).toBeLessThanOrEqual(2);
  });

  it('a listed provider that is not configured is skipped as such', async () => {
    const bare = await startTestApp();
    try {
      const { apiKey } = await bare.workspace();
      const res = await bare.request('POST', '/v1/api/enrich', {
        key: apiKey,
        body: { email: 'ana.souza@acme.com.br', providerOrder: ['hunter_verifier'], onlyListed: true },
      });
      expect(res.status).toBe(200);
      expect(res.body.providers).toEqual([expect.objectContaining({ provider: 'hunter_verifier', outcome: 'skipped', error: 'not configured' })]);
      expect(res.body.creditsCharged).toBe(0);
    } finally {
      await bare.close();
    }
  });

  it('enriches a company from the imported registry by CNPJ, with punctuation, and refuses a bad one by name', async () => {
    const { apiKey } = await app.workspace();
    const bad = await app.request('POST', '/v1/api/enrich', { key: apiKey, body: { cnpj: '11.222.333/0001-00' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'invalid_cnpj' });
    expect(bad.body.message).toMatch(/cnpj/);
    const none = await app.request('POST', '/v1/api/enrich', { key: apiKey, body: { cnpj: '11.222.333/0001-81', onlyListed: true, providerOrder: ['receita_federal'] } });
    expect(none.status).toBe(200);
    expect(none.body.providers[0]).toMatchObject({ provider: 'receita_federal', outcome: 'not_found', cost: 0 });
  });

  it('a workspace key is used instead of the service key, costs no credits, and is stored encrypted', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    const ownKey = 'workspace-own-pdl-key';
    pdl.accept(ownKey);
    await app.services.providerKeys.set(workspaceId, 'pdl', ownKey);
    const stored = await app.services.store.collection('provider_keys').find({ workspaceId }).toArray();
    expect(JSON.stringify(stored)).not.toContain(ownKey);

    const before = await balance(apiKey);
    const res = await app.request('POST', '/v1/api/enrich', {
      key: apiKey,
      body: { email: 'carla.mendes@globex.com', providerOrder: ['pdl'], onlyListed: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.record.fullName).toBe('Carla Mendes');
    expect(res.body.providers[0]).toMatchObject({ provider: 'pdl', outcome: 'found', cost: 0 });
    expect(pdl.requests.at(-1)!.headers['x-api-key']).toBe(ownKey);
    expect(await balance(apiKey)).toBe(before);

    // Another workspace still uses, and pays for, the service key.
    const other = await app.workspace();
    const theirs = await app.request('POST', '/v1/api/enrich', {
      key: other.apiKey,
      body: { email: 'carla.mendes@globex.com', providerOrder: ['pdl'], onlyListed: true },
    });
    expect(theirs.body.creditsCharged).toBe(3);
    expect(pdl.requests.at(-1)!.headers['x-api-key']).toBe(pdl.key);
    await app.services.providerKeys.remove(workspaceId, 'pdl');
  });
});

describe('POST /api/sourcing/people/hydrate', () => {
  it('enriches up to 25 leads at once, 1 credit per lead that gained a field', async () => {
    const { apiKey } = await app.workspace();
    const before = await balance(apiKey);
    const res = await app.request('POST', '/v1/api/sourcing/people/hydrate', {
      key: apiKey,
      body: {
        leads: [
          { name: 'Ana Souza', domain: 'acme.com.br', source: 'demo' },
          { name: 'Nobody Here', company: 'Nowhere Ltd' },
          { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(3);
    expect(res.body.results[0]).toMatchObject({ name: 'Ana Souza', email: 'ana.souza@acme.com.br', enriched: true, source: 'demo' });
    expect(res.body.results[1].enriched).toBe(false);
    expect(res.body.results[2]).toMatchObject({ fullName: 'Carla Mendes', enriched: true });
    expect(res.body.enriched).toBe(2);
    expect(before - (await balance(apiKey))).toBe(2);
  });

  it('maxCredits caps how many leads are enriched', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/sourcing/people/hydrate', {
      key: apiKey,
      body: {
        maxCredits: 1,
        leads: [
          { linkedinUrl: 'https://www.linkedin.com/in/ana-souza' },
          { linkedinUrl: 'https://www.linkedin.com/in/bruno-lima' },
          { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes' },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.enriched).toBe(1);
    expect(res.body.creditsCharged).toBe(1);
  });

  it('a lead with a malformed CNPJ is a 400 naming it', async () => {
    const { apiKey } = await app.workspace();
    const res = await app.request('POST', '/v1/api/sourcing/people/hydrate', {
      key: apiKey,
      body: { leads: [{ name: 'Ana' }, { cnpj: '123' }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/leads\[1\]\.cnpj/);
  });
});

describe('provider-key commands', () => {
  it('set, list and delete a workspace key; only keyed providers take one; the key never comes back', async () => {
    const { runCommand } = await import('../../../server/cli/control.ts');
    const { workspaceId } = await app.workspace();
    const run = (command: string, args: Record<string, string>) => runCommand(app.services, { command, args });

    const set = await run('provider-key set', { workspace: workspaceId, provider: 'hunter', key: 'hunter-own-key-123' });
    expect(set).toMatchObject({ ok: true, result: { workspaceId, provider: 'hunter', fingerprint: expect.stringMatching(/^[0-9a-f]{12}$/) } });
    expect(JSON.stringify(set)).not.toContain('hunter-own-key-123');
    const list = await run('provider-key list', { workspace: workspaceId });
    expect(list).toMatchObject({ ok: true, result: { keys: [expect.objectContaining({ provider: 'hunter' })] } });
    expect(JSON.stringify(list)).not.toContain('hunter-own-key-123');

    expect(await run('provider-key set', { workspace: workspaceId, provider: 'brasilapi', key: 'whatever-123' })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/--provider must be one of apollo, hunter, hunter_verifier, pdl/),
    });
    expect(await run('provider-key delete', { workspace: workspaceId, provider: 'hunter' })).toMatchObject({ ok: true });
    expect(await run('provider-key delete', { workspace: workspaceId, provider: 'hunter' })).toMatchObject({ ok: false, usage: true });
  });
});
