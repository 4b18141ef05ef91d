/**
 * Idempotency after a crash, on the embedded store (issues 29 and 39): a claim its process left
 * running is known dead when the next process starts, so a retry under its key runs at once
 * instead of 409 until the lease passes. What the dead run charged pays the retry first, and what
 * the retry does not use is refunded naming the key: the retry gets the answer (never a 5xx) and
 * the key costs what one run costs. (The real process killed with -9: idempotency-kill.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestHash } from '../../../server/pipeline/idempotency.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const cnpj = makeCnpj('22333444');
const body = { cnpjs: [cnpj] };
let dataDir: string;
let app: TestApp;

beforeEach(async () => {
  dataDir = await tempDir('idempotency-crash');
  app = await startTestApp({}, { dataDir });
  await app.services.store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
});
afterEach(() => app?.close());

/**
 * What a process that died under a claim leaves: the claim running (and what it charged).
 * `meanwhile`: what else the workspace does before the process dies.
 */
async function dieUnderClaim(key: string, charged: number, meanwhile?: (workspace: { apiKey: string; workspaceId: string }) => Promise<void>): Promise<{ apiKey: string; workspaceId: string }> {
  const workspace = await app.workspace('active');
  await app.services.credits.credit(workspace.workspaceId, 10, 'grant', 'ten');
  const held = await app.services.idempotency.claim(workspace.workspaceId, key, 'lookupCnpjBatch', requestHash('lookupCnpjBatch', { body }));
  if (!('claim' in held)) throw new Error('expected a fresh claim');
  if (charged > 0) {
    held.claim.charging(charged);
    // Named as the pipeline names a charge under a client's key.
    const note = `Idempotency-Key ${key}`;
    await app.services.payment.charge(workspace.workspaceId, charged, 'lookupCnpjBatch', `1 company (${note})`, { note });
  }
  await meanwhile?.(workspace);
  // The process goes away without settling the claim; the next one opens the same store.
  await app.close();
  app = await startTestApp({}, { dataDir });
  return workspace;
}

const retry = (apiKey: string, key: string) => app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body, headers: { 'Idempotency-Key': key } });

describe('a claim left running by a dead process', () => {
  it('that charged nothing: its retry runs at once, and is then replayed', async () => {
    const { apiKey, workspaceId } = await dieUnderClaim('crash-nothing-charged', 0);
    const res = await retry(apiKey, 'crash-nothing-charged');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    expect((await app.services.credits.view(workspaceId))!.balance).toBe(9);
    const again = await retry(apiKey, 'crash-nothing-charged');
    expect(again.status).toBe(200);
    expect((await app.services.credits.view(workspaceId))!.balance).toBe(9);
  });

  it('that charged: its retry gets the answer at once, and the key costs one run', async () => {
    const { apiKey, workspaceId } = await dieUnderClaim('crash-after-charge', 1);
    const res = await retry(apiKey, 'crash-after-charge');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(9);
    // The one debit is the dead run's: the retry took its charge from it.
    expect(view.movements.filter((m) => m.amount < 0)).toHaveLength(1);
    const again = await retry(apiKey, 'crash-after-charge');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await app.services.credits.view(workspaceId))!.balance).toBe(9);
  });

  it('that counted a charge whose debit never landed: its retry pays what the ledger says is unpaid', async () => {
    const workspace = await app.workspace('active');
    await app.services.credits.credit(workspace.workspaceId, 10, 'grant', 'ten');
    const held = await app.services.idempotency.claim(workspace.workspaceId, 'crash-before-debit', 'lookupCnpjBatch', requestHash('lookupCnpjBatch', { body }));
    if (!('claim' in held)) throw new Error('expected a fresh claim');
    await held.claim.charging(1);
    await app.close();
    app = await startTestApp({}, { dataDir });
    const res = await retry(workspace.apiKey, 'crash-before-debit');
    expect(res.status).toBe(200);
    expect((await app.services.credits.view(workspace.workspaceId))!.balance).toBe(9);
  });

  it('that charged more than its retry costs: the difference is refunded, naming the key', async () => {
    const { apiKey, workspaceId } = await dieUnderClaim('crash-charged-more', 3);
    const res = await retry(apiKey, 'crash-charged-more');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.balance).toBe(9);
    expect(view.movements[0]).toMatchObject({ amount: 2, operation: 'refund:lookupCnpjBatch', detail: expect.stringContaining('Idempotency-Key crash-charged-more') });
  });

  it('is paid by its own charges only, whatever another run’s ledger detail says: a job item named after the key is not refunded to it', async () => {
    // A job's item id is the client's text, and a charge's detail ends with it: this one's detail
    // ends "(Idempotency-Key crash-named)", as the cut run's own charge does.
    const { apiKey, workspaceId } = await dieUnderClaim('crash-named', 1, async (workspace) => {
      const job = await app.request('POST', '/v1/api/jobs', {
        key: workspace.apiKey,
        body: { operation: 'lookupCnpjBatch', items: [{ itemId: 'x (Idempotency-Key crash-named', input: body }] },
      });
      expect(job.status).toBe(202);
      await eventually(async () => (await app.request('GET', `/v1/api/jobs/${job.body.jobId}`, { key: workspace.apiKey })).body.status === 'done');
    });
    const res = await retry(apiKey, 'crash-named');
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(1);
    // The cut run's 1 credit and the job's 1: nothing refunded, nothing made from nothing.
    const view = (await app.services.credits.view(workspaceId))!;
    expect(view.movements.filter((m) => m.operation.startsWith('refund:'))).toEqual([]);
    expect(view.balance).toBe(8);
  });
});
