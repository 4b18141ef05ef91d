import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Credits, type LedgerDoc } from '../../../server/credits/ledger.ts';
import { Workspaces, type WorkspaceDoc } from '../../../server/credits/workspaces.ts';
import { runCommand } from '../../../server/cli/control.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const DAY = 86_400_000;

describe('plans', () => {
  it('a new workspace gets a 7-day trial with 500 credits, recorded as a movement', async () => {
    const createdAfter = Date.now();
    const { apiKey } = await app.workspace();
    const createdBefore = Date.now();
    const res = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ balance: 500, consumed: 0, plan: { name: 'trial' } });
    // Seven days from its creation, whenever that was: no allowance for how long the test takes.
    const expiresAt = Date.parse(res.body.plan.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(createdAfter + 7 * DAY);
    expect(expiresAt).toBeLessThanOrEqual(createdBefore + 7 * DAY);
    expect(res.body.movements).toEqual([
      {
        movementId: expect.any(String),
        at: expect.any(String),
        amount: 500,
        balanceAfter: 500,
        operation: 'trial_grant',
        detail: expect.any(String),
      },
    ]);
  });

  it('without a plan, paid operations answer 402 plan_required; the credits read still answers', async () => {
    const { apiKey } = await app.workspace('none');
    const res = await app.request('POST', '/v1/api/sourcing/people', { key: apiKey, body: {} });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'plan_required', message: expect.any(String) });
    expect((await app.request('GET', '/v1/api/credits', { key: apiKey })).status).toBe(200);
    expect((await app.request('GET', '/v1/health', { key: apiKey })).status).toBe(200);
  });

  it('an expired trial blocks paid operations and its unspent credits expire as one movement', async () => {
    const { workspaceId, apiKey } = await app.workspace('trial');
    await app.services.credits.debit(workspaceId, 20, 'test', 'used before expiry');
    // The trial ends just after that debit (what expires is what was left then), and is over now.
    const [debit] = await app.services.store.collection<LedgerDoc>('ledger').find({ workspaceId }, { sort: { seq: -1 }, limit: 1 }).toArray();
    const expiresAt = new Date(debit!.at.getTime() + 1);
    const accounts = app.services.store.collection<WorkspaceDoc>('workspaces');
    await accounts.updateOne({ _id: workspaceId }, { $set: { 'plan.expiresAt': expiresAt } });
    await eventually(() => Date.now() > expiresAt.getTime());

    const blocked = await app.request('POST', '/v1/api/sourcing/people', { key: apiKey, body: {} });
    expect(blocked.status).toBe(402);
    expect(blocked.body.error).toBe('plan_required');

    const credits = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(credits.balance).toBe(0);
    expect(credits.consumed).toBe(20);
    expect(credits.movements[0]).toMatchObject({ amount: -480, balanceAfter: 0, operation: 'trial_expired' });
    // Reading again does not expire twice.
    const again = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(again.movements.filter((m: { operation: string }) => m.operation === 'trial_expired')).toHaveLength(1);
  });

  it('credits granted after a trial ended are not the trial’s: only what was left when it ended expires', async () => {
    // A trial that began 8 days ago and ended yesterday, its 500 credits not written off yet (no request since).
    const workspace = await app.services.workspaces.create('Ended trial', 'trial', new Date(Date.now() - 8 * DAY));
    await app.services.credits.flushPending(workspace);
    const { apiKey } = await app.services.keys.create(workspace._id);

    // What `prospecta credits grant` runs in the server.
    const granted = await runCommand(app.services, { command: 'credits grant', args: { workspace: workspace._id, amount: '100' } });
    expect(granted).toEqual({ ok: true, result: { workspaceId: workspace._id, granted: 100, balance: 100 } });
    const credits = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(credits.balance).toBe(100);
    expect(credits.movements.map((m: { operation: string; amount: number }) => [m.operation, m.amount])).toEqual([
      ['trial_expired', -500],
      ['grant', 100],
      ['trial_grant', 500],
    ]);
  });

  it('a plan set after a trial ended does not bring its credits back: they expired with it', async () => {
    // A trial that ended yesterday, not written off yet (no request since), moved to a paid plan.
    const workspace = await app.services.workspaces.create('Upgraded late', 'trial', new Date(Date.now() - 8 * DAY));
    await app.services.credits.flushPending(workspace);
    const { apiKey } = await app.services.keys.create(workspace._id);

    // What `prospecta plan set` runs in the server.
    const set = await runCommand(app.services, { command: 'plan set', args: { workspace: workspace._id, plan: 'active' } });
    expect(set).toMatchObject({ ok: true, result: { plan: 'active' } });
    const credits = (await app.request('GET', '/v1/api/credits', { key: apiKey })).body;
    expect(credits.balance).toBe(0);
    expect(credits.movements[0]).toMatchObject({ operation: 'trial_expired', amount: -500, balanceAfter: 0 });
  });

  it('an active plan is not blocked', async () => {
    const { apiKey } = await app.workspace('active');
    const res = await app.request('POST', '/v1/api/sourcing/people', { key: apiKey, body: {} });
    expect(res.status).toBe(200);
  });
});

describe('ledger', () => {
  it('100 concurrent debits of 1 against a balance of 50: exactly 50 succeed, balance ends at 0', async () => {
    const { workspaceId } = await app.workspace('active');
    await app.services.credits.credit(workspaceId, 50, 'grant', 'fifty');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => app.services.payment.charge(workspaceId, 1, 'test', `debit ${i}`)),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
    expect(ok).toHaveLength(50);
    expect(refused).toHaveLength(50);
    for (const r of refused) expect(r.reason).toMatchObject({ code: 'insufficient_credits' });
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(0);
    expect(view.consumed).toBe(50);
    expect(view.movements.filter((m) => m.amount === -1)).toHaveLength(50);
    const balances = view.movements.filter((m) => m.amount === -1).map((m) => m.balanceAfter);
    expect(new Set(balances).size).toBe(50);
  });

  it('a debit that cannot be paid changes nothing', async () => {
    const { workspaceId } = await app.workspace();
    await expect(app.services.payment.charge(workspaceId, 501, 'test', 'too much')).rejects.toMatchObject({
      code: 'insufficient_credits',
      message: 'This operation costs 501 credits and the balance is 500.',
    });
    expect(await app.services.credits.debit(workspaceId, 501, 'test', 'too much')).toEqual({ ok: false, balance: 500 });
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(500);
    expect(view.movements).toHaveLength(1);
  });

  it('a zero charge is free and leaves no movement', async () => {
    const { workspaceId } = await app.workspace();
    expect(await app.services.payment.charge(workspaceId, 0, 'test', 'nothing found')).toBe(0);
    expect((await app.services.credits.view(workspaceId))!.movements).toHaveLength(1);
  });

  it('refunds add back, newest movement first, with the balance after each', async () => {
    const { workspaceId } = await app.workspace();
    await app.services.credits.debit(workspaceId, 10, 'enrich', 'three providers');
    await app.services.credits.refund(workspaceId, 4, 'enrich', 'one provider failed');
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(494);
    expect(view.movements.map((m) => [m.amount, m.balanceAfter, m.operation])).toEqual([
      [4, 494, 'refund:enrich'],
      [-10, 490, 'enrich'],
      [500, 500, 'trial_grant'],
    ]);
  });

  it('returns at most the 50 most recent movements', async () => {
    const { workspaceId } = await app.workspace();
    for (let i = 0; i < 55; i++) await app.services.credits.debit(workspaceId, 1, 'test', `d${i}`);
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.movements).toHaveLength(50);
    expect(view.movements[0]!.detail).toBe('d54');
  });

  it('a movement made elsewhere (another instance) shows in the next read, after one read was kept', async () => {
    const { workspaceId } = await app.workspace();
    const elsewhere = new Credits(app.services.store, new Workspaces(app.services.store));
    const first = (await app.services.credits.view(workspaceId))!;
    expect(first.movements).toHaveLength(1);
    expect(Object.isFrozen(first.movements[0])).toBe(true);
    expect((await app.services.credits.view(workspaceId))!.movements).toEqual(first.movements);
    await elsewhere.debit(workspaceId, 7, 'test', 'from another instance');
    const after = (await app.services.credits.view(workspaceId))!;
    expect(after.balance).toBe(493);
    expect(after.movements.map((m) => [m.amount, m.detail])).toEqual([
      [-7, 'from another instance'],
      [500, 'Free trial credits'],
    ]);
  });

  it('files the movements of a burst together, after their answers: the ledger reads each at once, and the outboxes empty by themselves', async () => {
    const { workspaceId } = await app.workspace();
    const { credits, store } = app.services;
    const accounts = store.collection<WorkspaceDoc>('workspaces');
    const ledger = store.collection<LedgerDoc>('ledger');
    await Promise.all(Array.from({ length: 30 }, (_, i) => app.services.payment.charge(workspaceId, 1, 'test', `burst ${i}`)));
    // Every answered movement waits in its outbox until filed, and a page of the ledger files what waits first.
    expect((await accounts.findOne({ _id: workspaceId }))!.pending.length + (await ledger.countDocuments({ workspaceId }))).toBeGreaterThanOrEqual(31);
    const page = await credits.page(workspaceId, { limit: 100 });
    expect(page.movements.map((m) => m.seq)).toEqual(Array.from({ length: 31 }, (_, i) => 31 - i));
    expect(page.movements.every((m, i, all) => m.balanceAfter === (all[i + 1]?.balanceAfter ?? 0) + m.amount)).toBe(true);
    // Without a read, charges are filed within moments, and their outbox emptied.
    await app.services.payment.charge(workspaceId, 2, 'test', 'after the burst');
    await eventually(async () => {
      expect((await accounts.findOne({ _id: workspaceId }))!.pending).toEqual([]);
      expect(await ledger.countDocuments({ workspaceId })).toBe(32);
    });
  });

  it('a movement left in the outbox by a crash is recovered into the ledger', async () => {
    const { workspaceId } = await app.workspace();
    const movementId = randomUUID();
    const accounts = app.services.store.collection<WorkspaceDoc>('workspaces');
    // What a crash right after the balance update leaves behind.
    await accounts.updateOne(
      { _id: workspaceId },
      {
        $inc: { balance: -3, consumed: 3, seq: 1 },
        $push: { pending: { movementId, at: new Date(), amount: -3, operation: 'test', detail: 'stranded' } },
      },
    );
    expect(await app.services.credits.recover()).toBeGreaterThanOrEqual(1);
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(497);
    expect(view.movements[0]).toMatchObject({ movementId, amount: -3, balanceAfter: 497 });
    expect((await accounts.findOne({ _id: workspaceId }))!.pending).toEqual([]);
  });

  it('counts what each day spent in the account, net of refunds, as the ledger says it', async () => {
    const { workspaceId } = await app.workspace();
    const { credits } = app.services;
    await credits.debit(workspaceId, 7, 'enrichPerson', 'spent');
    await credits.refund(workspaceId, 2, 'enrichPerson', 'given back');
    await credits.credit(workspaceId, 100, 'grant', 'not spending');
    await credits.debit(workspaceId, 1, 'lookupCnpjBatch', 'spent');
    const today = new Date().toISOString().slice(0, 10);
    const account = (await app.services.store.collection<WorkspaceDoc>('workspaces').findOne({ _id: workspaceId }))!;
    expect(account.spentFrom! <= today).toBe(true);
    expect(account.spent).toEqual({ [today]: 6 });
    expect((await credits.usage(workspaceId, 2)).map((d) => d.consumed)).toEqual([0, 6]);
  });

  it('reads the days before an account counted them from the ledger, and drops counts older than any read asks', async () => {
    const { workspaceId } = await app.workspace();
    const { credits } = app.services;
    const accounts = app.services.store.collection<WorkspaceDoc>('workspaces');
    const ledger = app.services.store.collection<LedgerDoc>('ledger');
    // An account from before the counts, with a ledger of its own days.
    await accounts.updateOne({ _id: workspaceId }, { $unset: { spent: '', spentFrom: '' } });
    const now = new Date();
    const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);
    const row = (at: Date, amount: number, operation: string) =>
      ledger.insertOne({ _id: randomUUID(), workspaceId, seq: 0, at, amount, balanceAfter: 0, operation, detail: 'before the counts' });
    await row(daysAgo(3), -4, 'enrichPerson');
    await row(daysAgo(2), -5, 'enrichPerson');
    await row(daysAgo(2), 1, 'refund:enrichPerson');
    await row(daysAgo(2), 50, 'grant');
    expect(await credits.startDailyCounts(now)).toBeGreaterThanOrEqual(1);
    const tomorrow = new Date(now.getTime() + DAY).toISOString().slice(0, 10);
    expect((await accounts.findOne({ _id: workspaceId }))!.spentFrom).toBe(tomorrow);
    // Today is read from the ledger (its spending before the counts began is only there); the debit is counted too, for later.
    await credits.debit(workspaceId, 2, 'enrichPerson', 'today');
    expect((await credits.usage(workspaceId, 4, now)).map((d) => d.consumed)).toEqual([4, 4, 0, 2]);
    // From tomorrow on, the counts: what a day after the counts began spent, whatever the ledger holds.
    await accounts.updateOne({ _id: workspaceId }, { $inc: { [`spent.${tomorrow}`]: 9 } });
    expect((await credits.usage(workspaceId, 5, new Date(now.getTime() + DAY))).map((d) => d.consumed)).toEqual([4, 4, 0, 2, 9]);

    // A year of counts: those older than the longest read (90 days) go at the next credits read.
    const old = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`spent.${daysAgo(i + 1).toISOString().slice(0, 10)}`, 1]));
    await accounts.updateOne({ _id: workspaceId }, { $set: old });
    await credits.view(workspaceId);
    const kept = Object.keys((await accounts.findOne({ _id: workspaceId }))!.spent!);
    expect(kept.length).toBeLessThanOrEqual(92);
    expect(kept).toContain(tomorrow);
    expect(kept).toContain(daysAgo(89).toISOString().slice(0, 10));
  });
});

