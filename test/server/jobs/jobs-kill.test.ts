/**
 * kill -9 in the middle of a job, and of its webhook's delivery, on the embedded store: the built
 * server as a real process, a job of paid `enrich` items against the fake People Data Labs (a
 * loopback server), killed with SIGKILL once some items are done and others wait at the provider,
 * then restarted on the same DATA_DIR. After the restart the job finishes, every item is charged
 * exactly once (its ledger movements name it) and every finished item's result is kept, and the
 * ledger is still a chain. Then the job's `job.finished` delivery is killed in flight: after the
 * next restart it is sent again, under the same `Prospecta-Delivery` id and a valid signature.
 *
 * On MongoDB a restart waits out the dead process's leases (10 minutes an item): what a second
 * instance does there is jobs-mongo.test.ts's.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { deferCleanup } from '../../helpers/cleanup.ts';
import { eventually } from '../../helpers/eventually.ts';
import { startFakePdl, syntheticWorld } from '../../helpers/fake-providers.ts';
import { latch } from '../../helpers/latch.ts';
import { startServer, type ServerProcess } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ITEMS = 40;
/** Items answered before the provider holds the rest. */
const BEFORE_KILL = 10;
const SECRET = 'kill-test-webhook-secret';

interface Received {
  id: string;
  signature: string;
  body: string;
  res: ServerResponse;
}

/** A webhook receiver: records each delivery, and answers it only when `answer` says so. */
async function receiver(answer: (delivery: Received, index: number) => boolean) {
  const received: Received[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const delivery = { id: String(req.headers['prospecta-delivery']), signature: String(req.headers['prospecta-signature']), body: Buffer.concat(chunks).toString('utf8'), res };
    received.push(delivery);
    if (answer(delivery, received.length - 1)) res.writeHead(200).end();
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  deferCleanup(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
}

const signed = ({ signature, body }: Received) => {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) ?? [];
  return v1 === createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
};

async function killed(server: ServerProcess): Promise<void> {
  server.child.kill('SIGKILL');
  await server.exited;
}

describe('kill -9 (embedded store)', () => {
  it('mid-job and mid-delivery: after each restart the job goes on, every item charged once and its result kept, the delivery sent', { timeout: 300_000 }, async () => {
    const world = syntheticWorld(ITEMS);
    const pdl = await startFakePdl(world);
    deferCleanup(() => pdl.close());
    // The first deliveries are held unanswered until the server that sent them is killed.
    let holdDeliveries = true;
    const hook = await receiver(() => !holdDeliveries);
    const dataDir = await tempDir('jobs-kill');
    const env = {
      DATA_DIR: dataDir,
      PDL_URL: pdl.url,
      PDL_API_KEY: pdl.key,
      JOBS_POLL_MS: '50',
      JOBS_CONCURRENCY: '4',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    };

    // The first BEFORE_KILL calls are answered; every later one waits for `provider`.
    const provider = latch();
    pdl.next({ until: Promise.resolve() }, BEFORE_KILL);
    pdl.next({ until: provider.promise }, 1_000_000);

    let server = await startServer(env);
    const key = /(service_live_[0-9A-Za-z]+)/.exec(server.stderr())?.[1];
    expect(key, server.stderr()).toBeDefined();
    // Answers are checked field by field below.
    const api = async (method: string, path: string, body?: unknown): Promise<any> => {
      const res = await fetch(`${server.url}/v1/api${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const startBalance = (await api('GET', '/credits')).balance as number;

    const items = world.map((p, i) => ({
      itemId: `person-${i}`,
      input: { linkedinUrl: p.linkedinUrl, goalFields: ['personalEmail'], providerOrder: ['pdl'], onlyListed: true },
    }));
    const { jobId } = await api('POST', '/jobs', { operation: 'enrich', items, webhook: { url: hook.url, secret: SECRET } });

    // Some items done, the next ones waiting at the provider: the process dies.
    await eventually(async () => (await api('GET', `/jobs/${jobId}`)).done === BEFORE_KILL && pdl.requests.length > BEFORE_KILL, {
      timeoutMs: 120_000,
      message: `${BEFORE_KILL} items done and more at the provider`,
    });
    await killed(server);
    provider.open();

    server = await startServer(env);
    // Done, and counted: an item written just before the kill, its count lost, is counted again
    // once the runner is sure no finisher is still between its two writes (jobs.ts, COUNT_GRACE_MS).
    await eventually(
      async () => {
        const view = await api('GET', `/jobs/${jobId}`);
        return view.status === 'done' && view.done === ITEMS;
      },
      { timeoutMs: 120_000, message: 'the job to finish after the restart, every item counted' },
    );

    // Its `job.finished` delivery is out, unanswered: the process dies again.
    await eventually(() => hook.received.length >= 1, { timeoutMs: 60_000, message: 'the job.finished delivery' });
    await killed(server);
    const beforeRestart = hook.received.length;
    holdDeliveries = false;
    server = await startServer(env);
    await eventually(() => hook.received.length > beforeRestart, { timeoutMs: 60_000, message: 'the delivery sent again after the restart' });
    const first = hook.received[0]!;
    const again = hook.received.at(-1)!;
    expect(hook.received.every((delivery) => delivery.id === first.id && signed(delivery))).toBe(true);
    expect(JSON.parse(again.body)).toMatchObject({ type: 'job.finished', jobId, job: { status: 'done', done: ITEMS } });

    // Every item's result is kept, and what it says it cost is what the ledger charged it, once.
    const results: Array<{ itemId: string; status: string; output?: { creditsCharged: number }; creditsCharged: number }> = [];
    for (let cursor: string | null = null; ; ) {
      const page: { results: typeof results; nextCursor: string | null } = await api('GET', `/jobs/${jobId}/results?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      results.push(...page.results);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(results.map((r) => r.itemId)).toEqual(items.map((item) => item.itemId));
    const movements: Array<{ seq: number; amount: number; balanceAfter: number; detail: string }> = [];
    for (let before: number | null = null; ; ) {
      const page: { movements: typeof movements; nextBefore: number | null } = await api('GET', `/credits/ledger?limit=200${before ? `&before=${before}` : ''}`);
      movements.push(...page.movements);
      before = page.nextBefore;
      if (!before) break;
    }
    for (const result of results) {
      expect(result.status, result.itemId).toBe('ok');
      const charges = movements.filter((m) => m.detail.endsWith(`(job ${jobId} item ${result.itemId})`));
      expect(charges, result.itemId).toHaveLength(1);
      expect(-charges[0]!.amount, result.itemId).toBe(result.creditsCharged);
      expect(result.output!.creditsCharged, result.itemId).toBe(result.creditsCharged);
      expect(result.creditsCharged).toBeGreaterThan(0);
    }
    const charged = results.reduce((sum, r) => sum + r.creditsCharged, 0);
    expect(await api('GET', `/jobs/${jobId}`)).toMatchObject({ status: 'done', total: ITEMS, done: ITEMS, failed: 0, creditsCharged: charged });
    // The ledger is a chain: gapless seqs, each balance the one before plus its amount, ending at the balance.
    const ascending = [...movements].reverse();
    ascending.forEach((m, i) => {
      expect(m.seq).toBe(i + 1);
      expect(m.balanceAfter).toBe((i === 0 ? 0 : ascending[i - 1]!.balanceAfter) + m.amount);
    });
    const { balance } = await api('GET', '/credits');
    expect(ascending.at(-1)!.balanceAfter).toBe(balance);
    expect(balance).toBe(startBalance - charged);
  });
});
