/**
 * Exports over HTTP on the embedded store: an export holds what paging the same search gives, in
 * CNPJ order and past the search's 1,000 rows (two pages of the exporter); CSV with one header,
 * formula prefixes and RFC 4180 quoting; NDJSON; the same file twice; charged per row written and
 * stopped, paid rows readable, when the balance runs out; another workspace's export not found;
 * bad input refused; its signed job.finished webhook; a cut run resumed at its checkpoint; and the
 * file removed 7 days after the job ended (the jobs' clock moved).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { parseCsv } from './csv.ts';

let app: TestApp;
let dataDir: string;
/** Added to the jobs' clock: the retention test moves it 7 days on. */
let jobsClockOffset = 0;

/** Matching establishments (`state: 'RS'`): more than one page of the exporter, and than the search's 1,000. */
const MATCHING = 1_150;
const matching = Array.from({ length: MATCHING }, (_, i) => makeCnpj(String(10_000_000 + i * 7)));
const odd = {
  formula: makeCnpj('99000001'),
  quoted: makeCnpj('99000002'),
};

beforeAll(async () => {
  dataDir = await tempDir('exports');
  app = await startTestApp({ JOBS_POLL_MS: '20', WEBHOOK_ALLOW_PRIVATE: 'true' }, { dataDir, jobsNow: () => Date.now() + jobsClockOffset });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  const rs = (cnpj: string, i: number) =>
    companyDoc(cnpj, { address: { ...companyDoc(cnpj).address, state: 'RS', city: 'PORTO ALEGRE' }, capital: 1000 + i });
  // Shuffled in: the order of the file is the CNPJs', not the insertion's.
  const docs = matching.map(rs).reverse();
  docs.push(companyDoc(makeCnpj('88000001')), companyDoc(makeCnpj('88000002')));
  docs.push(
    companyDoc(odd.formula, {
      name: '=HYPERLINK("http://evil.example","clique")',
      tradeName: '+SUM(A1:A9)',
      email: '@evil',
      address: { ...companyDoc(odd.formula).address, state: 'AC', street: '-1+1', complement: '\t=1+1', district: '\r=2+2' },
    }),
    companyDoc(odd.quoted, {
      name: 'PADARIA "PÃO, AÇÚCAR" LTDA',
      tradeName: 'LINHA 1\nLINHA 2',
      address: { ...companyDoc(odd.quoted).address, state: 'AC', city: 'RIO BRANCO' },
    }),
  );
  await companies.bulkWrite(docs.map((document) => ({ insertOne: { document } })), { ordered: false });
});
afterAll(() => app.close());

const exportOf = (key: string, body: unknown) => app.request('POST', '/v1/api/companies/export', { key, body });
const ended = (key: string, jobId: string) =>
  eventually(
    async () => {
      const res = await app.request('GET', `/v1/api/jobs/${jobId}`, { key });
      return ['done', 'stopped', 'cancelled', 'failed'].includes(res.body.status) && res.body;
    },
    { timeoutMs: 60_000 },
  );
const file = (key: string, jobId: string) => app.request('GET', `/v1/api/jobs/${jobId}/export`, { key });

async function richWorkspace(credits: number) {
  const ws = await app.workspace();
  await app.services.credits.credit(ws.workspaceId, credits, 'grant', 'exports test');
  return ws;
}

async function run(key: string, body: Record<string, unknown>) {
  const started = await exportOf(key, body);
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body.status).toBe('queued');
  const job = await ended(key, started.body.jobId);
  return { job, res: await file(key, started.body.jobId) };
}

/**
 * A stored export as a run left it: `running` since `now`, with `job`'s counts and `exported`'s
 * state of its file, for the runner to take up at its next pass.
 */
function leftRunning<J extends { export?: object | null }>(stored: J, now: Date, job: { _id: string; workspaceId?: string; done: number; creditsCharged: number }, exported: object): J {
  const running = { status: 'running', createdAt: now, updatedAt: now, finishedAt: null, expiresAt: null, settling: false };
  return { ...stored, ...job, ...running, export: { ...stored.export, ...exported } };
}

describe('exports', () => {
  it('writes every matching establishment in CNPJ order, past the search cap, as paging the same search gives them', async () => {
    const { apiKey } = await richWorkspace(5_000);
    const { job, res } = await run(apiKey, { state: 'RS', format: 'ndjson' });
    expect(job).toMatchObject({ operation: 'exportCompanies', status: 'done', done: MATCHING, total: MATCHING, failed: 0, creditsCharged: MATCHING });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toContain(`export-${job.jobId}.ndjson`);
    const lines = (res.body as string).split('\n');
    expect(lines.pop()).toBe('');
    const rows = lines.map((line) => JSON.parse(line));
    expect(rows.map((row) => row.cnpj)).toEqual([...matching].sort());

    // The search, paged to its cap: the same companies, field for field, in the same order.
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { results: unknown[]; nextCursor: string | null } } = await app.request('POST', '/v1/api/companies/search', {
        key: apiKey,
        body: { state: 'RS', limit: 20, ...(cursor ? { cursor } : {}) },
      });
      expect(page.status).toBe(200);
      paged.push(...page.body.results);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toHaveLength(1_000);
    expect(rows.slice(0, 1_000)).toEqual(paged);

    // Charged per row, in the ledger as the export's own movements.
    const ledger = await app.request('GET', '/v1/api/credits/ledger?operation=exportCompanies&limit=100', { key: apiKey });
    expect(ledger.body.movements.reduce((sum: number, m: { amount: number }) => sum + m.amount, 0)).toBe(-MATCHING);
  });

  it('writes CSV: one header, nested fields flattened, formulas neutralised, quoting, UTF-8; the same filters give the same file', async () => {
    const { apiKey } = await app.workspace();
    const first = await run(apiKey, { state: 'AC', format: 'csv' });
    expect(first.job).toMatchObject({ status: 'done', done: 2, creditsCharged: 2 });
    expect(first.res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const text = first.res.body as string;
    const [header, ...rows] = parseCsv(text);
    expect(header).toContain('cnpj');
    expect(header).toContain('address.city');
    expect(header).toContain('mainActivity.code');
    expect(header).toContain('partners');
    expect(rows).toHaveLength(2);
    const cell = (row: string[], name: string) => row[header!.indexOf(name)];
    const [formula, quoted] = rows as [string[], string[]];
    expect(cell(formula, 'cnpj')).toBe(odd.formula);
    expect(cell(formula, 'name')).toBe(`'=HYPERLINK("http://evil.example","clique")`);
    expect(cell(formula, 'tradeName')).toBe(`'+SUM(A1:A9)`);
    expect(cell(formula, 'email')).toBe(`'@evil`);
    expect(cell(formula, 'address.street')).toBe(`'-1+1`);
    // A leading tab or carriage return is a formula's way in too (OWASP's CSV injection list).
    expect(cell(formula, 'address.complement')).toBe(`'\t=1+1`);
    expect(cell(formula, 'address.district')).toBe(`'\r=2+2`);
    expect(cell(quoted, 'name')).toBe('PADARIA "PÃO, AÇÚCAR" LTDA');
    expect(cell(quoted, 'tradeName')).toBe('LINHA 1\nLINHA 2');
    expect(cell(quoted, 'address.city')).toBe('RIO BRANCO');
    // The raw text: quotes doubled inside a quoted cell, rows ended by CRLF.
    expect(text).toContain('"PADARIA ""PÃO, AÇÚCAR"" LTDA"');
    expect(text.split('\r\n')).toHaveLength(4);

    const second = await run(apiKey, { state: 'AC', format: 'csv' });
    expect(second.res.body).toBe(text);
  });

  it('charges per row written and stops when the balance runs out; the rows paid for stay readable', async () => {
    const { apiKey } = await app.workspace(); // a trial: 500 credits
    const { job, res } = await run(apiKey, { state: 'RS', format: 'csv', maxRows: 1_000 });
    expect(job).toMatchObject({ status: 'stopped', done: 500, total: 500, creditsCharged: 500 });
    const [, ...rows] = parseCsv(res.body as string);
    expect(rows.map((row) => row[0])).toEqual([...matching].sort().slice(0, 500));
    const credits = await app.request('GET', '/v1/api/credits', { key: apiKey });
    expect(credits.body.balance).toBe(0);
  });

  it('stops at maxRows', async () => {
    const { apiKey } = await app.workspace();
    const { job, res } = await run(apiKey, { state: 'RS', format: 'ndjson', maxRows: 3 });
    expect(job).toMatchObject({ status: 'done', done: 3, total: 3, creditsCharged: 3 });
    expect((res.body as string).trim().split('\n').map((line) => JSON.parse(line).cnpj)).toEqual([...matching].sort().slice(0, 3));
  });

  it("refuses bad input naming it, and answers 404 for another workspace's export and for a job that is no export", async () => {
    const { apiKey } = await app.workspace();
    for (const [body, message] of [
      [{ state: 'RS' }, /format/],
      [{ format: 'xlsx' }, /format/],
      [{ format: 'csv', maxRows: 0 }, /maxRows/],
      [{ format: 'csv', maxRows: 1_000_001 }, /maxRows/],
      [{ format: 'csv', state: 'ZZ' }, /state/],
      [{ format: 'csv', webhook: { url: 'http://127.0.0.1/hook', secret: 'short' } }, /secret/],
    ] as const) {
      const res = await exportOf(apiKey, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    // What only the server can judge (a CNAE code, the webhook's address) is named all at once too.
    const both = await exportOf(apiKey, { format: 'csv', partnerDocument: 'abc', webhook: { url: 'ftp://example.com/hook', secret: 'x'.repeat(16) } });
    expect(both.status).toBe(400);
    expect(both.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('partnerDocument') });
    expect(both.body.message).toContain('webhook.url');

    const { job } = await run(apiKey, { state: 'AC', format: 'ndjson' });
    const other = await app.workspace();
    expect((await file(other.apiKey, job.jobId)).status).toBe(404);
    expect((await app.request('GET', `/v1/api/jobs/${job.jobId}`, { key: other.apiKey })).status).toBe(404);

    const lookup = await app.request('POST', '/v1/api/jobs', { key: apiKey, body: { operation: 'lookupCnpjBatch', items: [{ input: { cnpjs: [odd.quoted] } }] } });
    await ended(apiKey, lookup.body.jobId);
    expect((await file(apiKey, lookup.body.jobId)).status).toBe(404);
  });

  it('signs and sends its job.finished webhook when it ends', async () => {
    const secret = 'an-export-webhook-secret';
    const received: Array<{ signature: string; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ signature: String(req.headers['prospecta-signature']), body });
        res.end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { apiKey } = await app.workspace();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const { job } = await run(apiKey, { state: 'AC', format: 'csv', webhook: { url, secret } });
      const [delivery] = await eventually(() => received.length > 0 && received);
      const { t, v1 } = Object.fromEntries(delivery!.signature.split(',').map((part) => part.split('=')));
      expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${delivery!.body}`).digest('hex'));
      expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'job.finished', jobId: job.jobId, job: { operation: 'exportCompanies', status: 'done', done: 2, total: 2 } });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('resumes a cut run at its checkpoint: the torn tail cut off, rows billed before the cut written free, the file as a whole run writes it', async () => {
    const { workspaceId, apiKey } = await richWorkspace(5_000);
    const whole = await run(apiKey, { state: 'RS', format: 'ndjson' });
    const expected = whole.res.body as string;
    const stored = (await app.services.jobs.docs.findOne({ _id: whole.job.jobId }))!;
    const balance = async () => (await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance as number;
    const before = await balance();

    // As a run killed mid-page leaves it: 2 rows checkpointed, 5 billed (debited before the kill),
    // half a row written after the checkpoint, held by a runner that died.
    const lines = expected.split('\n');
    const checkpointed = `${lines[0]}\n${lines[1]}\n`;
    const jobId = randomUUID();
    await mkdir(join(dataDir, 'exports'), { recursive: true });
    await writeFile(join(dataDir, 'exports', `${jobId}.ndjson`), checkpointed + lines[2]!.slice(0, 40));
    const now = new Date();
    await app.services.jobs.docs.insertOne(
      leftRunning(stored, now, { _id: jobId, workspaceId, done: 2, creditsCharged: 5 }, {
        rows: 2,
        bytes: Buffer.byteLength(checkpointed),
        lastCnpj: JSON.parse(lines[1]!).cnpj,
        billed: 5,
        owner: 'a-runner-that-died',
        leaseUntil: new Date(now.getTime() + 3_600_000),
        attempts: 0,
      }),
    );
    app.services.jobRunner.wake();
    const job = await ended(apiKey, jobId);
    expect(job).toMatchObject({ status: 'done', done: MATCHING, creditsCharged: MATCHING });
    expect((await file(apiKey, jobId)).body).toBe(expected);
    // Rows 3 to 5 were paid before the cut: only the rest is charged now.
    expect(before - (await balance())).toBe(MATCHING - 5);
  });

  it('gives back the rows it was paid for and never wrote when it fails for good', async () => {
    // The clock moved below is put back for the retention test, which counts from it.
    onTestFinished(() => void (jobsClockOffset = 0));
    const { workspaceId, apiKey } = await richWorkspace(5_000);
    const whole = await run(apiKey, { state: 'RS', format: 'ndjson' });
    const stored = (await app.services.jobs.docs.findOne({ _id: whole.job.jobId }))!;
    const balance = async () => (await app.request('GET', '/v1/api/credits', { key: apiKey })).body.balance as number;
    const before = await balance();

    // As a run leaves it when its disk fails after paying for a page: 2 rows written, 5 paid for.
    const jobId = randomUUID();
    await app.services.credits.debit(workspaceId, 3, 'exportCompanies', `export ${jobId} rows 3 to 5`);
    const first = (whole.res.body as string).split('\n').slice(0, 2).join('\n') + '\n';
    // The disk keeps failing: where the file should be, something no run can open for writing.
    await mkdir(join(dataDir, 'exports', `${jobId}.ndjson`), { recursive: true });
    onTestFinished(() => rm(join(dataDir, 'exports', `${jobId}.ndjson`), { recursive: true, force: true }));
    const now = new Date(Date.now() + jobsClockOffset);
    await app.services.jobs.docs.insertOne(
      leftRunning(stored, now, { _id: jobId, workspaceId, done: 2, creditsCharged: 2 }, {
        rows: 2,
        bytes: Buffer.byteLength(first),
        lastCnpj: matching.slice().sort()[1]!,
        billed: 5,
        owner: null,
        leaseUntil: null,
        attempts: 0,
      }),
    );
    // Each fault lets it go for a while before the next try: the jobs' clock is moved past it.
    const job = await eventually(async () => {
      jobsClockOffset += 60_000;
      app.services.jobRunner.wake();
      const res = await app.request('GET', `/v1/api/jobs/${jobId}`, { key: apiKey });
      return res.body.status === 'failed' && res.body;
    }, { timeoutMs: 30_000 });
    expect(job).toMatchObject({ done: 2, creditsCharged: 2 });
    // The 3 rows paid for and never written are refunded: the balance is back to what it was.
    expect(await eventually(async () => (await balance()) === before)).toBe(true);
    const ledger = await app.request('GET', '/v1/api/credits/ledger', { key: apiKey });
    expect(ledger.body.movements[0]).toMatchObject({ amount: 3, operation: 'refund:exportCompanies' });
  });

  it('stops, failed, at the next page once its workspace has no active plan (a trial that ended), charging nothing more', async () => {
    const { workspaceId, apiKey } = await app.workspace();
    const whole = await run(apiKey, { state: 'AC', format: 'ndjson' });
    const stored = (await app.services.jobs.docs.findOne({ _id: whole.job.jobId }))!;
    // The trial ends, its credits unspent, while an export waits to be taken up.
    await app.services.store
      .collection<{ _id: string; plan: { expiresAt: Date } }>('workspaces')
      .updateOne({ _id: workspaceId }, { $set: { 'plan.expiresAt': new Date(Date.now() - 60_000) } });
    const jobId = randomUUID();
    const now = new Date(Date.now() + jobsClockOffset);
    await app.services.jobs.docs.insertOne(
      leftRunning(stored, now, { _id: jobId, done: 0, creditsCharged: 0 }, { rows: 0, bytes: 0, lastCnpj: null, billed: 0, owner: null, leaseUntil: null, attempts: 0 }),
    );
    app.services.jobRunner.wake();
    // Read from the store: a request of the workspace would meet the plan gate first, which expires the trial's credits.
    const job = await eventually(async () => {
      const doc = await app.services.jobs.docs.findOne({ _id: jobId });
      return doc && ['done', 'stopped', 'failed'].includes(doc.status) && doc;
    });
    expect(job).toMatchObject({ status: 'failed', done: 0, creditsCharged: 0 });
    const { movements } = await app.services.credits.page(workspaceId, { limit: 10 });
    expect(movements.filter((m) => m.detail.includes(jobId))).toEqual([]);
  });

  // Last: it moves the jobs' clock of this server 7 days on.
  it('removes the file 7 days after the job ended', async () => {
    const { apiKey } = await app.workspace();
    const { job, res } = await run(apiKey, { state: 'AC', format: 'csv' });
    expect(res.status).toBe(200);
    const path = join(dataDir, 'exports', `${job.jobId}.csv`);
    expect(existsSync(path)).toBe(true);

    jobsClockOffset = 6 * 86_400_000;
    app.services.jobRunner.wake();
    expect((await file(apiKey, job.jobId)).status).toBe(200);

    jobsClockOffset = 7 * 86_400_000 + 60_000;
    app.services.jobRunner.wake();
    await eventually(() => !existsSync(path));
    expect((await file(apiKey, job.jobId)).status).toBe(404);
  });

  it('holds up no other job when an ended export\'s file cannot be removed', async () => {
    const { apiKey } = await app.workspace();
    const { job } = await run(apiKey, { state: 'AC', format: 'csv' });
    // Something no removal takes (a folder where its file was): its sweep fails at every pass.
    const path = join(dataDir, 'exports', `${job.jobId}.csv`);
    await rm(path);
    await mkdir(join(path, 'held'), { recursive: true });
    onTestFinished(() => rm(path, { recursive: true, force: true }));
    jobsClockOffset += 7 * 86_400_000 + 60_000;
    app.services.jobRunner.wake();
    const next = await run(apiKey, { state: 'AC', format: 'ndjson' });
    expect(next.job).toMatchObject({ status: 'done', done: 2 });
  });
});
