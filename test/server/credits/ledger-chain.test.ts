/**
 * The ledger stays a chain whatever reads race the debits: every movement is filed once, under the
 * `seq` and `balanceAfter` of its own update, so the `seq`s are distinct and gapless, each
 * `balanceAfter` is the one before plus the amount, and the ledger paged by `before=seq` holds
 * every movement and sums to the balance. Reads that copy the outbox (`GET /credits`, another
 * instance's, start-up after a SIGKILL) are what broke it (issue 29).
 *
 * The first test is the repro, scaled down: clients alternating a 1-credit lookup and
 * `GET /credits` over HTTP for LEDGER_REPRO_MS (default 1500 ms); it prints its figures.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoClient } from 'mongodb';
import { Credits } from '../../../server/credits/ledger.ts';
import { newMovement } from '../../../server/credits/movement.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { Workspaces, type WorkspaceDoc } from '../../../server/credits/workspaces.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { embeddedStorePerTest } from '../../helpers/embedded-store.ts';
import { eventually } from '../../helpers/eventually.ts';
import { track } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { mongoForTests, throwawayMongoStore } from '../store/mongo-server.ts';

interface ChainFigures {
  /** Rows in the ledger collection. */
  movements: number;
  distinctSeqs: number;
  /** Rows reached by paging with `before=seq`. */
  paged: number;
  pagedSum: number;
  balance: number;
  /** Rows whose balanceAfter is not the previous row's plus its amount, or whose seq is not the previous + 1. */
  brokenLinks: number;
}

async function chainOf(credits: Credits, store: Store, workspaceId: string): Promise<ChainFigures> {
  // The rows are read from the collection: what is written in the background (MongoDB's outbox pulls) ends first.
  const rows = await store.collection<{ _id: string; workspaceId: string; seq: number }>('ledger').find({ workspaceId }).toArray();
  const paged: Array<{ seq: number; amount: number; balanceAfter: number }> = [];
  let before: number | undefined;
  for (;;) {
    const page = await credits.page(workspaceId, { limit: 100, ...(before !== undefined ? { before } : {}) });
    paged.push(...page.movements);
    if (page.nextBefore === null) break;
    before = page.nextBefore;
  }
  let brokenLinks = 0;
  for (let i = 0; i < paged.length; i++) {
    const m = paged[i]!;
    const older = paged[i + 1];
    const previousBalance = older ? older.balanceAfter : 0;
    if (m.balanceAfter !== previousBalance + m.amount || m.seq !== (older ? older.seq + 1 : 1)) brokenLinks++;
  }
  const account = (await store.collection<WorkspaceDoc>('workspaces').findOne({ _id: workspaceId }))!;
  return {
    movements: rows.length,
    distinctSeqs: new Set(rows.map((r) => r.seq)).size,
    paged: paged.length,
    pagedSum: paged.reduce((sum, m) => sum + m.amount, 0),
    balance: account.balance,
    brokenLinks,
  };
}

function expectChain(figures: ChainFigures, movements?: number): void {
  expect(figures).toEqual({
    movements: movements ?? figures.movements,
    distinctSeqs: figures.movements,
    paged: figures.movements,
    pagedSum: figures.balance,
    balance: figures.balance,
    brokenLinks: 0,
  });
}

describe('over HTTP, clients alternating a 1-credit lookup and GET /credits (the issue 29 repro)', () => {
  let app: TestApp;
  const cnpj = makeCnpj('12345678');
  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
    await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
  });
  afterAll(() => app?.close());

  it('files every movement once, under its own seq and balance', async () => {
    const { workspaceId, apiKey } = await app.workspace('active');
    await app.services.credits.credit(workspaceId, 100_000, 'grant', 'repro');
    const clients = 60;
    const until = Date.now() + Number(process.env.LEDGER_REPRO_MS ?? 1500);
    let lookups = 0;
    const client = async () => {
      while (Date.now() < until) {
        const charged = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [cnpj] } });
        expect(charged.status).toBe(200);
        lookups++;
        expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
      }
    };
    await Promise.all(Array.from({ length: clients }, client));
    const figures = await chainOf(app.services.credits, app.services.store, workspaceId);
    console.log(
      `ledger repro: ${clients} clients, ${lookups} lookups: ${figures.movements} movements, ${figures.distinctSeqs} distinct seqs, ` +
        `${figures.paged} reached by paging, paged sum ${figures.pagedSum} vs balance ${figures.balance}, ${figures.brokenLinks} broken links`,
    );
    expectChain(figures, lookups + 1);
    expect(figures.balance).toBe(100_000 - lookups);
  });
});

/**
 * Two instances (two Credits over one store) on one workspace: writers debiting and crediting
 * through both, while readers on both read the credits (and so file what is pending).
 * `concurrentWriters` 1 serializes the writes and keeps only the reads racing them.
 */
function acrossInstances(open: () => Promise<{ store: Store; dispose(): Promise<void> }>, { rounds, concurrentWriters }: { rounds: number; concurrentWriters: number }) {
  return async () => {
    const { store, dispose } = await open();
    try {
      const workspaces = new Workspaces(store);
      const instances = [new Credits(store, workspaces), new Credits(store, new Workspaces(store))];
      const workspace = await workspaces.create('chain', 'trial');
      await instances[0]!.flushPending(workspace);
      let writing = true;
      const reader = async (k: number) => {
        // setImmediate: a read answered from memory never leaves the microtask queue, and would
        // starve the writers' disk I/O.
        while (writing) await Promise.all([instances[k % 2]!.view(workspace._id), new Promise(setImmediate)]);
      };
      const writer = async (k: number) => {
        for (let n = 0; n < rounds; n++) {
          const credits = instances[(k + n) % 2]!;
          if (n % 5 === 4) await credits.credit(workspace._id, 2, 'grant', `credit ${k}-${n}`);
          else expect(await credits.debit(workspace._id, 1, 'test', `debit ${k}-${n}`)).toEqual({ ok: true });
        }
      };
      const readers = Array.from({ length: 4 }, (_, k) => reader(k));
      try {
        await Promise.all(Array.from({ length: concurrentWriters }, (_, k) => writer(k)));
      } finally {
        writing = false;
        await Promise.all(readers);
      }
      await instances[1]!.view(workspace._id);
      const figures = await chainOf(instances[0]!, store, workspace._id);
      expectChain(figures, 1 + concurrentWriters * rounds);
      await eventually(async () => expect((await workspaces.get(workspace._id))!.pending).toEqual([]));
    } finally {
      await dispose();
    }
  };
}

describe('across instances', () => {
  const embedded = embeddedStorePerTest('ledger-chain');
  it(
    'embedded store: concurrent debits and credits, read by both instances, stay a chain',
    acrossInstances(async () => ({ store: embedded.store, dispose: async () => {} }), { rounds: 25, concurrentWriters: 8 }),
  );
});

/** Movements a crash left in the outbox (one of them already filed), recovered at start-up. */
async function strandedMovements(store: Store): Promise<void> {
  const workspaces = new Workspaces(store);
  const credits = new Credits(store, workspaces);
  const workspace = await workspaces.create('stranded', 'trial');
  await credits.flushPending(workspace);
  const accounts = store.collection<WorkspaceDoc>('workspaces');
  const amounts = [-3, 10, -4, -1];
  for (const [i, amount] of amounts.entries()) {
    // What a crash right after the balance update leaves behind.
    const movement = newMovement(amount, amount < 0 ? 'test' : 'grant', `stranded ${i}`);
    const after = (await accounts.findOneAndUpdate({ _id: workspace._id }, { $inc: { balance: amount, seq: 1 }, $push: { pending: movement } }, { returnDocument: 'after' }))!;
    // The third was filed before the crash, but not yet cleared from the outbox.
    if (i === 2) {
      const row = { _id: movement.movementId, workspaceId: workspace._id, seq: after.seq, at: movement.at, amount, balanceAfter: after.balance, operation: 'test', detail: movement.detail };
      await store.collection<typeof row>('ledger').insertOne(row);
    }
  }
  expect(await credits.recover()).toBe(1);
  const figures = await chainOf(credits, store, workspace._id);
  expectChain(figures, 1 + amounts.length);
  expect(figures.balance).toBe(502);
  expect((await workspaces.get(workspace._id))!.pending).toEqual([]);
}

describe('after a crash', () => {
  const embedded = embeddedStorePerTest('ledger-stranded');
  it('embedded store: stranded movements are filed under their own seq and balance, and the outbox drains', () => strandedMovements(embedded.store));
});

describe('a movement and its ledger row', () => {
  const embedded = embeddedStorePerTest('ledger-atomic');
  it('embedded store: are committed together before the debit answers, so a store closed at once loses neither and leaves nothing to file', async () => {
    const problems: Error[] = [];
    const workspaces = new Workspaces(embedded.store);
    const credits = new Credits(embedded.store, workspaces, (err) => problems.push(err));
    const workspace = await workspaces.create('closing', 'trial');
    await credits.flushPending(workspace);
    expect(await credits.debit(workspace._id, 3, 'test', 'just before closing')).toEqual({ ok: true });
    // No turn of the event loop between the answer and the close: nothing may be left to write.
    await embedded.store.close();
    await credits.settled();
    expect(problems).toEqual([]);

    await embedded.reopen();
    const reopened = new Credits(embedded.store, new Workspaces(embedded.store));
    expect(await reopened.recover()).toBe(0);
    const figures = await chainOf(reopened, embedded.store, workspace._id);
    expectChain(figures, 2);
    expect(figures.balance).toBe(497);
    expect((await new Workspaces(embedded.store).get(workspace._id))!.pending).toEqual([]);
  });
});

const mongo = await mongoForTests();
if ('reason' in mongo) console.warn(`Skipping the MongoDB half of the ledger chain tests: ${mongo.reason}.`);
const ferretDb = mongo.uri ? await isFerretDb(mongo.uri) : false;

async function isFerretDb(uri: string): Promise<boolean> {
  const client = await MongoClient.connect(uri);
  try {
    return 'ferretdbVersion' in (await client.db('admin').command({ buildInfo: 1 }));
  } finally {
    await client.close();
  }
}

describe.skipIf(!mongo.uri)('on MongoDB', () => {
  afterAll(() => (mongo.uri ? mongo.stop() : undefined));
  it('stranded movements are filed under their own seq and balance, and the outbox drains (FerretDB too)', async () => {
    const { store, dispose } = await throwawayMongoStore(mongo.uri!);
    try {
      await strandedMovements(store);
    } finally {
      await dispose();
    }
  });
  // FerretDB 1.24 reads, changes and writes a document back without isolation, so concurrent
  // updates of one account lose all but one (200 concurrent $inc added 8): no ledger stays a
  // chain, nor a balance exact, over it. Not MongoDB's behaviour: run against a real mongod.
  it.skipIf(ferretDb)(
    'concurrent debits and credits, read by both instances, stay a chain (not on FerretDB: it loses concurrent updates)',
    acrossInstances(() => throwawayMongoStore(mongo.uri!), { rounds: 10, concurrentWriters: 8 }),
  );
});

describe('after a SIGKILL', () => {
  let bundles: string;
  beforeAll(async () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    // Under the repository so the bundle's bare imports (mingo) resolve from its node_modules.
    const cache = join(root, 'node_modules', '.cache', 'prospecta-test');
    await mkdir(cache, { recursive: true });
    bundles = await tempDir('ledger', { parent: cache });
    await build({
      entryPoints: [fileURLToPath(new URL('./children/debit-until-killed.ts', import.meta.url))],
      outdir: bundles,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });
  });

  it('every acknowledged movement is in the ledger at the next start, under its own seq, none twice', async () => {
    const dir = await tempDir('ledger-kill');
    let store = await openEmbeddedStore(dir);
    const workspace = await new Workspaces(store).create('killed', 'trial');
    const before = new Credits(store, new Workspaces(store));
    await before.flushPending(workspace);
    await before.credit(workspace._id, 100_000, 'grant', 'to spend');
    await store.close();

    const child = track(spawn(process.execPath, [join(bundles, 'debit-until-killed.mjs'), dir, workspace._id], { stdio: ['ignore', 'pipe', 'inherit'] }));
    const acknowledged: string[] = [];
    let buffered = '';
    const exited = new Promise((resolve) => child.on('close', resolve));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      acknowledged.push(...lines);
      if (acknowledged.length >= 400) child.kill('SIGKILL');
    });
    await exited;

    store = await openEmbeddedStore(dir);
    try {
      const credits = new Credits(store, new Workspaces(store));
      await credits.recover();
      const figures = await chainOf(credits, store, workspace._id);
      const details = new Set((await store.collection<{ _id: string; detail: string }>('ledger').find({ workspaceId: workspace._id }).toArray()).map((r) => r.detail));
      expect(acknowledged.filter((d) => !details.has(d))).toEqual([]);
      expect(figures.movements).toBeGreaterThanOrEqual(acknowledged.length + 2);
      expectChain(figures);
      expect((await store.collection<WorkspaceDoc>('workspaces').findOne({ _id: workspace._id }))!.pending).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
