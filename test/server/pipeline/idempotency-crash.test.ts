/**
 * Idempotency after a crash, on the embedded store (issue 29): a claim its process left running
 * is known dead when the next process starts, so a retry under its key is answered at once (run,
 * when nothing was charged; else told what was, without paying twice) instead of 409 for the
 * 15 minutes of the lease.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestHash } from '../../../server/pipeline/idempotency.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
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

/** What a process that died under a claim leaves: the claim running (and what it charged). */
async function dieUnderClaim(key: string, charged: number): Promise<{ apiKey: string; workspaceId: string }> {
  const workspace = await app.workspace('active');
  await app.services.credits.credit(workspace.workspaceId, 10, 'grant', 'ten');
  const held = await app.services.idempotency.claim(workspace.workspaceId, key, 'lookupCnpjBatch', requestHash('lookupCnpjBatch', { body }));
  if (!('claim' in held)) throw new Error('expected a fresh claim');
  if (charged > 0) {
    held.claim.charging(charged);
    await app.services.payment.charge(workspace.workspaceId, charged, 'lookupCnpjBatch', '1 company');
  }
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

  it('that charged: its retry is told so at once, and nothing is charged again', async () => {
    const { apiKey, workspaceId } = await dieUnderClaim('crash-after-charge', 1);
    const res = await retry(apiKey, 'crash-after-charge');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error', message: expect.stringMatching(/stopped when the server did, after charging up to 1 credit;/) });
    expect((await app.services.credits.view(workspaceId))!.balance).toBe(9);
  });
});
