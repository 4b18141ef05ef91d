/**
 * MCP's tasks extension (2026-07-28) on jobs: a client that declares it gets a task for
 * `start_job`, follows it with `tasks/get` to the job's summary, and stops another with
 * `tasks/cancel`; a client that does not gets the tool's own answer and no task methods. A task
 * is its stored job, so another workspace's is unknown and a restart leaves it where its job is.
 * Items whose timing matters run through a gated lookupCnpjBatch (the real handler, after the
 * test opens it), as in the jobs tests.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import type { HandlerContext } from '../../../server/invocation/handler.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { latch } from '../../helpers/latch.ts';
import { rawMcp } from '../../helpers/mcp.ts';
import { RpcError, TASKS_EXTENSION, tasksClient, type TasksClient } from '../../helpers/mcp-tasks.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const found = makeCnpj('11222333');
/** Items naming this CNPJ wait for the gate (or their job's cancel) before looking up. */
const gated = makeCnpj('66777888');
const gate = latch();

let app: TestApp;
const open: Array<{ close(): Promise<void> }> = [];

async function connect(target: TestApp, apiKey: string, options?: { declare: boolean }): Promise<TasksClient> {
  const client = await tasksClient(target.url, apiKey, options);
  open.push(client);
  return client;
}

const items = (cnpj: string, count: number) => Array.from({ length: count }, () => ({ input: { cnpjs: [cnpj] } }));

async function addCompanies(target: TestApp) {
  const companies = target.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [found, gated]) await companies.insertOne(companyDoc(cnpj));
}

beforeAll(async () => {
  app = await startTestApp(
    { JOBS_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' },
    {
      handlers: ({ lookupCnpjBatch }) => ({
        lookupCnpjBatch: async (input, ctx: HandlerContext) => {
          if (input.cnpjs.includes(gated)) {
            await new Promise<void>((resolve, reject) => {
              void gate.promise.then(resolve);
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
            });
          }
          return lookupCnpjBatch(input, ctx);
        },
      }),
    },
  );
  await addCompanies(app);
});
afterAll(async () => {
  gate.open();
  await Promise.all(open.map((client) => client.close()));
  await app.close();
});

/** `tasks/get` until the task leaves `working`. */
const settled = (client: TasksClient, taskId: string) =>
  eventually(
    async () => {
      const task = await client.request('tasks/get', { taskId });
      return task.status !== 'working' && task;
    },
    { timeoutMs: 240_000, intervalMs: 200, message: `task ${taskId} to end` },
  );

describe('the tasks extension', () => {
  it('is advertised in server/discover, to 2026-07-28 clients only', async () => {
    const { apiKey } = await app.workspace();
    const client = new Client({ name: 'prospecta-tests', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
    open.push(client);
    expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS_EXTENSION]: {} });
  });

  it('runs a 1,000-item job started by a tool call as a task, followed with tasks/get to its summary and results', { timeout: 300_000 }, async () => {
    const { workspaceId, apiKey } = await app.workspace();
    await app.services.credits.credit(workspaceId, 10_000, 'grant', 'tests');
    const client = await connect(app, apiKey);

    const created = await client.request('tools/call', { name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items: items(found, 1_000) } });
    // Flat: the task's fields beside resultType, no wrapper; kept while its job runs.
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: expect.any(Number) });
    expect(created).not.toHaveProperty('task');
    const { taskId } = created;
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    expect(Date.parse(created.lastUpdatedAt)).not.toBeNaN();

    // Right away, and while it runs, tasks/get reads the job: its progress in the message and in _meta.
    const first = await client.request('tasks/get', { taskId });
    expect(first).toMatchObject({ resultType: 'complete', taskId, _meta: { 'prospecta/job': { jobId: taskId, total: 1_000 } } });
    expect(first.statusMessage).toMatch(/of 1000 items finished/);
    expect(first).not.toHaveProperty('result');

    const ended = await settled(client, taskId);
    expect(ended.status).toBe('completed');
    expect(ended.statusMessage).toBe('done: 1000 of 1000 items finished (0 failed), 1000 credits charged');
    // Kept 7 days after it ended.
    expect(Date.parse(ended.createdAt) + ended.ttlMs).toBe(Date.parse(ended._meta['prospecta/job'].finishedAt) + 7 * 24 * 3_600_000);
    expect(ended.result.isError).toBeUndefined();
    const summary = JSON.parse(ended.result.content[0].text);
    expect(summary).toMatchObject({ jobId: taskId, status: 'done', total: 1_000, done: 1_000, failed: 0, creditsCharged: 1_000 });
    // The pointer to the items' results is a tool call that works.
    expect(summary.results).toEqual({ tool: 'get_job_results', arguments: { jobId: taskId } });
    const page = await client.request('tools/call', { name: summary.results.tool, arguments: { ...summary.results.arguments, limit: 500 } });
    expect(page.structuredContent.results).toHaveLength(500);
    expect(page.structuredContent.results[0]).toMatchObject({ status: 'ok', output: { results: [{ cnpj: found }] } });
    // The same job over HTTP.
    expect((await app.request('GET', `/v1/api/jobs/${taskId}`, { key: apiKey })).body).toMatchObject({ status: 'done', done: 1_000 });
  });

  it('runs an export started by export_companies as a task, completed with its rows counted and the path of its file', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(app, apiKey);
    const created = await client.request('tools/call', { name: 'export_companies', arguments: { state: 'SP', format: 'ndjson' } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const ended = await settled(client, created.taskId);
    expect(ended).toMatchObject({ status: 'completed', statusMessage: 'done: 2 rows written, 2 credits charged' });
    const summary = JSON.parse(ended.result.content[0].text);
    expect(summary).toMatchObject({ operation: 'exportCompanies', status: 'done', done: 2, file: `/v1/api/jobs/${created.taskId}/export` });
    const file = await app.request('GET', summary.file, { key: apiKey });
    expect((file.body as string).trim().split('\n').map((line) => JSON.parse(line).cnpj)).toEqual([found, gated].sort());
  });

  it('cancels a running job with tasks/cancel, which acknowledges it (again once it has ended) and tasks/get reads as cancelled', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(app, apiKey);
    const { taskId } = await client.request('tools/call', { name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items: items(gated, 5) } });
    await eventually(async () => (await app.request('GET', `/v1/api/jobs/${taskId}`, { key: apiKey })).body.status === 'running');

    expect(await client.request('tasks/cancel', { taskId })).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const task = await client.request('tasks/get', { taskId });
    expect(task).toMatchObject({ taskId, status: 'cancelled' });
    expect(task).not.toHaveProperty('result');
    expect((await app.request('GET', `/v1/api/jobs/${taskId}`, { key: apiKey })).body.status).toBe('cancelled');
    // A task that has ended is acknowledged the same way (the extension's idempotent cancel).
    expect((await client.request('tasks/cancel', { taskId })).resultType).toBe('complete');
  });

  it("answers an unknown task, another workspace's, or a malformed id with -32602", async () => {
    const owner = await connect(app, (await app.workspace()).apiKey);
    const { taskId } = await owner.request('tools/call', { name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items: items(found, 1) } });
    const stranger = await connect(app, (await app.workspace()).apiKey);
    for (const [method, id] of [
      ['tasks/get', taskId],
      ['tasks/cancel', taskId],
      ['tasks/update', taskId],
      ['tasks/get', '6d1f3c1e-5b4a-4c8e-9f0a-2b3c4d5e6f70'],
      ['tasks/get', 'not-a-task'],
    ] as const) {
      const err = await stranger.request(method, { taskId: id, ...(method === 'tasks/update' ? { inputResponses: {} } : {}) }).catch((e: unknown) => e);
      expect(err, `${method} ${id}`).toBeInstanceOf(RpcError);
      expect((err as RpcError).code, `${method} ${id}`).toBe(-32602);
    }
    // Its owner still reads it.
    expect((await owner.request('tasks/get', { taskId })).taskId).toBe(taskId);
  });

  it('gives a client that does not declare the extension the tool’s own answer, and -32021 for the task methods', async () => {
    const { apiKey } = await app.workspace();
    const client = await connect(app, apiKey, { declare: false });
    const answer = await client.request('tools/call', { name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items: items(found, 2) } });
    expect(answer).toMatchObject({ resultType: 'complete', structuredContent: { status: 'queued', total: 2 } });
    expect(answer).not.toHaveProperty('taskId');
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const err = await client.request(method, { taskId: answer.structuredContent.jobId, inputResponses: {} }).catch((e: unknown) => e);
      expect((err as RpcError).code, method).toBe(-32021);
      expect((err as RpcError).data, method).toEqual({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    // tasks/list and tasks/result, of the 2025-11-25 design, are no methods of this revision.
    const declared = { _meta: { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } } } };
    for (const method of ['tasks/list', 'tasks/result']) {
      const { status, body } = await rawMcp(app.url, apiKey, '2026-07-28', method, { taskId: answer.structuredContent.jobId, ...declared });
      expect([status, body.error?.code], method).toEqual([404, -32601]);
    }
  });

  it('answers a tool that starts no job as always, even to a declaring client', async () => {
    const client = await connect(app, (await app.workspace()).apiKey);
    const answer = await client.request('tools/call', { name: 'get_credits', arguments: {} });
    expect(answer).toMatchObject({ resultType: 'complete', structuredContent: { balance: 500 } });
    expect(answer).not.toHaveProperty('taskId');
  });
});

describe('a task across a restart', () => {
  it('is its stored job: started on a server that runs no jobs, it is still working after a restart and completes there', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir('tasks-restart');
    const before = await startTestApp({ JOBS_POLL_MS: '20' }, { dataDir, jobs: false });
    await addCompanies(before);
    const { apiKey } = await before.workspace();
    const first = await connect(before, apiKey);
    const { taskId } = await first.request('tools/call', { name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items: items(found, 3) } });
    expect((await first.request('tasks/get', { taskId })).status).toBe('working');
    await first.close();
    await before.close();

    const after = await startTestApp({ JOBS_POLL_MS: '20' }, { dataDir });
    try {
      const again = await connect(after, apiKey);
      const ended = await settled(again, taskId);
      expect(ended).toMatchObject({ taskId, status: 'completed' });
      expect(JSON.parse(ended.result.content[0].text)).toMatchObject({ status: 'done', done: 3 });
    } finally {
      await after.close();
    }
  });
});
