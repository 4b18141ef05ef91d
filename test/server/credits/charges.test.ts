/**
 * Charging checked against the registry: every operation whose credit rule is not `free` is called
 * once (each body below once) through the real server and loopback fakes, in a workspace of its
 * own, and the ledger must have moved exactly as the rule says: per row, per company found, per
 * provider that answered, or a fixed price. The units are read from the answer here, and the
 * price from the registry entry by this file's own reading of the rule (not the server's
 * `priceOf`), so a handler charging the wrong count, or not at all, fails; and the answer's
 * `creditsCharged` (a stream's `done`) must say exactly what the ledger moved.
 *
 * A paid operation without a case fails twice: the compiler refuses `cases` (it is keyed by every
 * paid id), and the walk of the registry below fails at run time. Adding one is one entry: a body
 * that makes it charge something, and how to count its units from the answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type InputOf, type OperationId, type Operations } from '../../../shared/operations/index.ts';
import type { CreditRule } from '../../../shared/operations/types.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { seedDemoPeople } from '../../../server/seed/demo-people.ts';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';
import { seedChanges } from '../../helpers/changes.ts';
import { dataBlocks, startFakeLlm, startFakeWeb, type ChatBody, type FakeLlm, type FakeWeb } from '../../helpers/fake-llm.ts';
import { startFakeApollo, startFakeHunter, startFakePdl, testWorld, type FakeProvider } from '../../helpers/fake-providers.ts';

/** The ids of the operations the registry prices (a credit rule other than `free`). */
type PaidOperationId = { [Id in OperationId]: Operations[Id]['credits'] extends { rule: 'free' } ? never : Id }[OperationId];

interface ChargeCase<Id extends PaidOperationId> {
  /** One call each, in a fresh workspace; each must cost something, or the case proves nothing. */
  bodies: Array<InputOf<Id>>;
  /**
   * What the rule counts, read from the answer: rows or companies for `per_result`, 1 for a
   * `fixed` call that was billable, the declared costs of the providers that returned data for
   * `provider_sum`.
   */
  units(answer: TestResponse, catalog: Map<string, number>): number;
  /**
   * For an operation that charges in the background (an export job): its answer once the work
   * has ended, read with the workspace's key; `units` then reads that.
   */
  finished?(started: TestResponse, key: string): Promise<TestResponse>;
}

/** Rows of a JSON search's `results`, or of every `page` event of a stream. */
const rows = (answer: TestResponse): number =>
  answer.events
    ? answer.events.filter((e) => e.event === 'page').reduce((n, e) => n + (e.data as { results: unknown[] }).results.length, 0)
    : (answer.body.results as unknown[]).length;

const cases: { [Id in PaidOperationId]: ChargeCase<Id> } = {
  searchPeople: { bodies: [{ sourceOrder: ['receita_federal', 'demo'], limit: 5 }], units: rows },
  streamPeople: { bodies: [{ sourceOrder: ['receita_federal', 'demo'], limit: 5 }], units: rows },
  hydratePeople: {
    bodies: [
      {
        leads: [
          { name: 'Ana Souza', domain: 'acme.com.br', source: 'demo' },
          { name: 'Nobody Here', company: 'Nowhere Ltd' },
          { linkedinUrl: 'https://www.linkedin.com/in/carla-mendes' },
        ],
      },
    ],
    units: (answer) => (answer.body.results as Array<{ enriched: boolean }>).filter((lead) => lead.enriched).length,
  },
  searchCompanies: { bodies: [{ cnaes: ['6201501'], limit: 20 }], units: rows },
  streamCompanies: { bodies: [{ cnaes: ['6201501'], limit: 25 }], units: rows },
  exportCompanies: {
    bodies: [{ cnaes: ['6201501'], format: 'ndjson' }],
    // Charged as its rows are written: the job once it has ended, which counts them.
    finished: (started, key) =>
      eventually(async () => {
        const job = await app.request('GET', `/v1/api/jobs/${started.body.jobId}`, { key });
        return job.body.status === 'done' && job;
      }),
    units: (job) => job.body.done,
  },
  searchCompanyChanges: {
    // The changes recorded between the two releases seeded below.
    bodies: [{ kinds: ['opened', 'status'] }],
    units: (answer) => (answer.body.changes as unknown[]).length,
  },
  lookupCnpjBatch: {
    // Two found, one unknown, one with wrong check digits: only the found are paid for.
    bodies: [{ cnpjs: [makeCnpj('11222333'), makeCnpj('44555666'), makeCnpj('77888999'), '11222333000100'] }],
    units: rows,
  },
  enrich: {
    // Hunter finds the email, Apollo the rest: two providers answer, each at its declared cost.
    bodies: [{ fullName: 'Ana Souza', companyDomain: 'acme.com.br' }],
    units: (answer, catalog) =>
      (answer.body.providers as Array<{ provider: string; outcome: string }>)
        .filter((attempt) => attempt.outcome === 'found')
        .reduce((sum, attempt) => sum + catalog.get(attempt.provider)!, 0),
  },
  research: {
    bodies: [
      { prompt: 'Does this company sell to hospitals?', company: 'Acme Health' },
      { prompt: 'Does this company sell to hospitals?', company: 'Acme Health', webSearch: true },
    ],
    units: () => 1,
  },
  aiColumn: {
    bodies: [{ instruction: 'industry in two words', Company: 'Acme Health' }],
    // A value served from the cache is free; this workspace has none cached.
    units: (answer) => (answer.body.cached ? 0 : 1),
  },
};

/** This test's own reading of a credit rule (shared/operations/types.ts documents it). */
function debitOf(rule: CreditRule, units: number, body: Record<string, unknown>): number {
  switch (rule.rule) {
    case 'free':
      return 0;
    case 'per_result':
      return units * rule.cost;
    case 'fixed':
      return units * (rule.costWith && body[rule.costWith.field] === true ? rule.costWith.cost : rule.cost);
    case 'provider_sum':
      return units;
  }
}

let apollo: FakeProvider;
let hunter: FakeProvider;
let pdl: FakeProvider;
let llm: FakeLlm;
let web: FakeWeb;
let app: TestApp;

/** A model that answers AI columns with a value and research with an answer citing nothing. */
function model(body: ChatBody): string {
  return dataBlocks(body).row ? JSON.stringify({ value: 'Health software' }) : JSON.stringify({ answer: 'Yes, to hospitals.', citations: [] });
}

beforeAll(async () => {
  const world = testWorld();
  [apollo, hunter, pdl, llm, web] = await Promise.all([startFakeApollo(world), startFakeHunter(world), startFakePdl(world), startFakeLlm(model), startFakeWeb()]);
  app = await startTestApp({
    APOLLO_API_KEY: apollo.key,
    APOLLO_URL: apollo.url,
    HUNTER_API_KEY: hunter.key,
    HUNTER_URL: hunter.url,
    HUNTER_VERIFIER_URL: hunter.url,
    PDL_API_KEY: pdl.key,
    PDL_URL: pdl.url,
    PROVIDER_KEY_SECRET: 'a'.repeat(64),
    LLM_BASE_URL: llm.baseUrl,
    LLM_API_KEY: llm.key,
    LLM_MODEL: 'fake-model',
    SEARXNG_URL: web.url,
    WEB_FETCH_ALLOW_LOOPBACK: 'true',
  });
  web.results = [{ path: '/acme', title: 'Acme Health', snippet: 'Scheduling software for hospitals' }];
  web.pages.set('/acme', { html: '<html><head><title>Acme Health</title></head><body><article><p>Acme builds scheduling software for hospitals and clinics across Brazil.</p></article></body></html>' });
  const seeded = [
    companyDoc(makeCnpj('11222333'), { partners: [partner({ name: 'MARIA DE SOUZA', qualification: 'Sócio-Administrador' })] }),
    companyDoc(makeCnpj('44555666'), { partners: [partner({ name: 'JOAO DA SILVA', qualification: 'Sócio' })] }),
  ];
  await app.services.store.collection<CompanyDoc>('companies').bulkWrite(seeded.map((document) => ({ insertOne: { document } })));
  await seedChanges(app, '2026-11', '2026-10', [
    { doc: seeded[0]!, kind: 'opened' },
    { doc: seeded[1]!, kind: 'status', fields: { registrationStatus: { from: 'ATIVA', to: 'BAIXADA' } } },
    { doc: seeded[1]!, kind: 'capital', fields: { capital: { from: 1, to: 2 } } },
  ]);
  await seedDemoPeople(app.services.people);
});

afterAll(async () => {
  await app?.close();
  await Promise.all([apollo, hunter, pdl, llm, web].map((fake) => fake?.close()));
});

interface Movement {
  movementId: string;
  seq: number;
  amount: number;
  balanceAfter: number;
  operation: string;
}

async function ledger(apiKey: string): Promise<{ balance: number; movements: Movement[] }> {
  const [credits, page] = await Promise.all([
    app.request('GET', '/v1/api/credits', { key: apiKey }),
    app.request('GET', '/v1/api/credits/ledger?limit=200', { key: apiKey }),
  ]);
  return { balance: credits.body.balance, movements: page.body.movements };
}

describe('charging, checked against the registry', () => {
  const paid = Object.entries(operations)
    .filter(([, op]) => op.credits.rule !== 'free')
    .map(([id]) => id);

  it('has a case for every paid operation of the registry', () => {
    expect(paid.length).toBeGreaterThan(0);
    const missing = paid.filter((id) => !(id in cases));
    expect(missing, 'paid operations without a case in charges.test.ts').toEqual([]);
  });

  it.each(paid)('%s moves the ledger exactly as its credit rule says', async (id) => {
    const entry = operations[id as PaidOperationId];
    const kase = cases[id as PaidOperationId] as ChargeCase<PaidOperationId> | undefined;
    if (!kase) return expect.fail(`${id} has no case`);
    const catalog = new Map<string, number>(
      (await app.request('GET', '/v1/api/providers')).body.providers.map((p: { id: string; cost: number }) => [p.id, p.cost]),
    );

    for (const body of kase.bodies) {
      const { apiKey } = await app.workspace();
      const before = await ledger(apiKey);
      const started = await app.request(entry.method, entry.path, { key: apiKey, body });
      expect(started.status, JSON.stringify(started.body)).toBe(Number(Object.keys(entry.responses)[0]));
      const answer = kase.finished ? await kase.finished(started, apiKey) : started;
      const debit = debitOf(entry.credits, kase.units(answer, catalog), body as Record<string, unknown>);
      expect(debit, 'the case must make the operation charge something').toBeGreaterThan(0);

      const after = await ledger(apiKey);
      expect(before.balance - after.balance).toBe(debit);
      // What the call wrote to the ledger: debits of this operation only, a chain from the old balance.
      const known = new Set(before.movements.map((m) => m.movementId));
      const added = after.movements.filter((m) => !known.has(m.movementId)).reverse();
      expect(added.length).toBeGreaterThan(0);
      let balance = before.balance;
      for (const movement of added) {
        expect(movement).toMatchObject({ operation: id, balanceAfter: balance + movement.amount });
        expect(movement.amount).toBeLessThan(0);
        balance = movement.balanceAfter;
      }
      expect(balance).toBe(after.balance);
      // Every paid answer says what it cost, the ledger's movement: in its body, or a stream's `done` event.
      const reported = answer.events ? (answer.events.find((e) => e.event === 'done')?.data as { creditsCharged?: number } | undefined)?.creditsCharged : answer.body.creditsCharged;
      expect(reported, 'creditsCharged in the answer').toBe(debit);
    }
  });
});
