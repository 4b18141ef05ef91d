/**
 * Paid calls under an `Idempotency-Key` cut by kill -9 (issue 39): the built server as a real
 * process, 16 CNPJ batch lookups over HTTP and 6 over MCP, each under its own key, and a job of
 * lookups, all in flight when the process is killed with SIGKILL; then it restarts on the same
 * store and every key is retried. No retry is a 5xx, every one gets the operation's answer, every
 * key (and every job item) costs in the ledger what one run costs, and the ledger is still a chain.
 * On the embedded store and on MongoDB (FerretDB in CI), where a dead run's claim is taken over
 * once its lease lapses (`IDEMPOTENCY_LEASE_SECONDS`, short here); the job is the embedded
 * store's alone, since on MongoDB a dead process's items wait out their 10-minute leases
 * (jobs-mongo.test.ts covers items shared by instances).
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { openStore } from '../../../server/store/open.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { deferCleanup } from '../../helpers/cleanup.ts';
import { eventually } from '../../helpers/eventually.ts';
import { workspaceHere } from '../../helpers/commands.ts';
import { startServer, type ServerProcess } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { dropDatabase, mongoForTests, throwawayDatabaseName } from '../store/mongo-server.ts';

const HTTP_CALLS = 16;
const MCP_CALLS = 6;
/** Enough that the job is still running when the process dies. */
const JOB_ITEMS = 200;
/** Calls in flight at once while the server is killed: some between their debit and their stored answer. */
const IN_FLIGHT = 8;
/** Each call asks for every company, so one run costs one credit each: the most a call may ask for on the embedded store; FerretDB is slower. */
const EMBEDDED_COMPANIES = 500;
const MONGO_COMPANIES = 20;

const mongo = await mongoForTests();
if (!mongo.uri) console.log(`idempotency kill -9 on MongoDB skipped: ${'reason' in mongo ? mongo.reason : ''}`);

interface Movement {
  seq: number;
  amount: number;
  balanceAfter: number;
  detail: string;
}

async function scenario(env: Record<string, string>, { withJob, companies, httpCalls = HTTP_CALLS, mcpCalls = MCP_CALLS }: { withJob: boolean; companies: number; httpCalls?: number; mcpCalls?: number }): Promise<void> {
  const cnpjs = Array.from({ length: companies }, (_, i) => makeCnpj(String(52_000_000 + i)));
  const body = { cnpjs };
  const store = await openStore({ mongodbUri: env.MONGODB_URI, dataDir: env.DATA_DIR! });
  for (const cnpj of cnpjs) await store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
  await store.close();
  const { apiKey } = await workspaceHere(env, 'kill', 1_000_000);

  let server = await startServer(env);
  const api = async (method: string, path: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/v1/api${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, ...(payload ? { 'Content-Type': 'application/json' } : {}), ...headers },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const mcpClient = async (srv: ServerProcess) => {
    const client = new Client({ name: 'kill-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
    deferCleanup(() => client.close());
    return client;
  };
  const mcpCall = (client: Client, key: string) =>
    client.callTool({ name: 'lookup_cnpj_batch', arguments: body, _meta: { idempotencyKey: key } }) as Promise<CallToolResult>;

  const run = randomUUID().slice(0, 8);
  const httpKeys = Array.from({ length: httpCalls }, (_, i) => `kill-${run}-http-${i}`);
  const mcpKeys = Array.from({ length: mcpCalls }, (_, i) => `kill-${run}-mcp-${i}`);
  const items = Array.from({ length: JOB_ITEMS }, (_, i) => ({ itemId: `item-${i}`, input: { cnpjs: cnpjs.slice(0, 50) } }));
  const started = withJob ? await api('POST', '/jobs', { operation: 'lookupCnpjBatch', items }) : null;
  if (started) expect(started.status, JSON.stringify(started.body)).toBe(202);
  const jobId = started?.body.jobId as string;

  // A few calls at a time, HTTP and MCP interleaved, each starting as another ends, so that
  // whenever the process dies some are between their debit and their stored answer; it dies as
  // the first eighth of them have answered.
  const client = await mcpClient(server);
  let answered = 0;
  const dying = server;
  const http = httpKeys.map((key) => () => api('POST', '/companies/cnpj/batch', body, { 'Idempotency-Key': key }));
  const mcp = mcpKeys.map((key) => () => mcpCall(client, key));
  const calls = Array.from({ length: Math.max(http.length, mcp.length) }, (_, i) => [http[i], mcp[i]]).flat().filter((call) => call !== undefined);
  const worker = async () => {
    for (let call = calls.shift(); call; call = calls.shift()) {
      await call().then(
        () => void (++answered === Math.ceil((httpKeys.length + mcpKeys.length) / 8) && dying.child.kill('SIGKILL')),
        () => {},
      );
    }
  };
  await Promise.allSettled(Array.from({ length: IN_FLIGHT }, worker));
  if (!dying.child.killed) dying.child.kill('SIGKILL');
  await server.exited;

  server = await startServer(env);
  const retries = await mcpClient(server);
  // A dead run's claim answers 409 until it may be taken over (at once on the embedded store).
  const settled = async <T>(call: () => Promise<T>, inUse: (answer: T) => boolean): Promise<T> =>
    eventually(async () => {
      const answer = await call();
      return inUse(answer) ? false : answer;
    }, { timeoutMs: 60_000, intervalMs: 200, message: 'a retry past the dead claim' });
  for (const key of httpKeys) {
    const res = await settled(() => api('POST', '/companies/cnpj/batch', body, { 'Idempotency-Key': key }), (r) => r.status === 409);
    expect(res.status, `${key}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(res.body.results, key).toHaveLength(companies);
  }
  for (const key of mcpKeys) {
    const result = await settled(() => mcpCall(retries, key), (r) => r.isError === true && /idempotency_key_in_use/.test(JSON.stringify(r.content)));
    expect(result.isError, `${key}: ${JSON.stringify(result.content)}`).toBeFalsy();
    expect((result.structuredContent as { results: unknown[] }).results, key).toHaveLength(companies);
  }
  const job = !withJob ? { failed: 0 } : await eventually(
    async () => {
      const view = (await api('GET', `/jobs/${jobId}`)).body;
      return view.status === 'done' && view.done + view.failed === JOB_ITEMS && view;
    },
    { timeoutMs: 120_000, intervalMs: 200, message: 'the job to finish after the restart' },
  );
  expect(job.failed).toBe(0);
  const results: Array<{ itemId: string; status: string; creditsCharged: number }> = withJob ? (await api('GET', `/jobs/${jobId}/results?limit=500`)).body.results : [];

  const movements: Movement[] = [];
  for (let before: number | null = null; ; ) {
    const page = (await api('GET', `/credits/ledger?limit=200${before ? `&before=${before}` : ''}`)).body as { movements: Movement[]; nextBefore: number | null };
    movements.push(...page.movements);
    before = page.nextBefore;
    if (!before) break;
  }
  // A key's movements: its run's debits, "(Idempotency-Key k)", and a refund naming it, "Idempotency-Key k: …".
  const totalOf = (key: string) =>
    movements.filter((m) => m.detail.endsWith(`(Idempotency-Key ${key})`) || m.detail.startsWith(`Idempotency-Key ${key}:`)).reduce((sum, m) => sum + m.amount, 0);
  for (const key of [...httpKeys, ...mcpKeys]) expect(totalOf(key), key).toBe(-companies);
  for (const result of results) {
    expect(result.status, result.itemId).toBe('ok');
    const paid = movements.filter((m) => m.detail.endsWith(`(job ${jobId} item ${result.itemId})`)).reduce((sum, m) => sum + m.amount, 0);
    expect(-paid, result.itemId).toBe(50);
    expect(result.creditsCharged, result.itemId).toBe(50);
  }
  // The ledger is a chain: gapless seqs, each balance the one before plus its amount, ending at the balance.
  const ascending = [...movements].reverse();
  ascending.forEach((m, i) => {
    expect(m.seq).toBe(i + 1);
    expect(m.balanceAfter).toBe((i === 0 ? 0 : ascending[i - 1]!.balanceAfter) + m.amount);
  });
  expect(ascending.at(-1)!.balanceAfter).toBe((await api('GET', '/credits')).body.balance);
}

describe('kill -9 under Idempotency-Keys', () => {
  it('embedded store: every key answers after the restart, and costs one run', { timeout: 300_000 }, async () => {
    await scenario({ DATA_DIR: await tempDir('idempotency-kill'), JOBS_POLL_MS: '50' }, { withJob: true, companies: EMBEDDED_COMPANIES });
  });

  it.skipIf(!mongo.uri)('MongoDB: the same, once each dead claim has lapsed', { timeout: 300_000 }, async () => {
    const dbName = throwawayDatabaseName();
    const base = new URL(mongo.uri!);
    base.pathname = `/${dbName}`;
    deferCleanup(() => dropDatabase(mongo.uri!, dbName));
    await scenario({ MONGODB_URI: base.toString(), DATA_DIR: await tempDir('idempotency-kill-mongo'), JOBS_POLL_MS: '50', IDEMPOTENCY_LEASE_SECONDS: '3' }, { withJob: false, companies: MONGO_COMPANIES, httpCalls: 8, mcpCalls: 2 });
  });
});
