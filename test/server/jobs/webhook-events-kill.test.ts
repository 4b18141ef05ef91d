/**
 * Webhook events are stored with the work they report (issue 39): a job whose `job.item` events
 * go to a receiver, its server killed with SIGKILL while items run, then restarted on the same
 * DATA_DIR. Every item's event is delivered at least once, each under one `Prospecta-Delivery` id
 * however many times it is sent. Before, an item's result was written and its event stored after
 * it, so the items in flight at the kill kept their results and charges but lost their events.
 */
import { describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { openStore } from '../../../server/store/open.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { workspaceHere } from '../../helpers/commands.ts';
import { apiOf, startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';

const ITEMS = 400;
const SECRET = 'kill-test-webhook-secret';
const cnpj = makeCnpj('53000000');

describe('kill -9 while a job reports its items', () => {
  it('every item event is delivered after the restart, each under one delivery id', { timeout: 300_000 }, async () => {
    const byItem = new Map<string, Set<string>>();
    const url = await webhookReceiver((event: { type: string; item?: { itemId: string } }, headers) => {
      if (event.type !== 'job.item') return;
      const ids = byItem.get(event.item!.itemId) ?? new Set<string>();
      ids.add(String(headers['prospecta-delivery']));
      byItem.set(event.item!.itemId, ids);
    });

    const env = { DATA_DIR: await tempDir('webhook-events-kill'), JOBS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true' };
    const store = await openStore({ dataDir: env.DATA_DIR });
    await store.collection<CompanyDoc>('companies').insertOne(companyDoc(cnpj));
    await store.close();
    const { apiKey } = await workspaceHere(env, 'events', ITEMS);

    let server = await startServer(env);
    const api = apiOf(() => server, apiKey);
    const items = Array.from({ length: ITEMS }, (_, i) => ({ itemId: `item-${i}`, input: { cnpjs: [cnpj] } }));
    const { jobId } = await api('POST', '/jobs', { operation: 'lookupCnpjBatch', items, webhook: { url, secret: SECRET, events: ['job.item'] } });
    expect(jobId).toBeDefined();

    // Items are being finished and reported: the process dies among them.
    await eventually(() => byItem.size >= ITEMS / 8, { timeoutMs: 60_000, intervalMs: 1, message: 'some item events delivered' });
    server.child.kill('SIGKILL');
    await server.exited;
    server = await startServer(env);

    await eventually(async () => (await api('GET', `/jobs/${jobId}`)).status === 'done', { timeoutMs: 120_000, message: 'the job to finish' });
    await eventually(() => byItem.size === ITEMS, { timeoutMs: 60_000, message: `every item's event (${byItem.size} of ${ITEMS} so far)` });
    for (const [itemId, ids] of byItem) expect(ids.size, itemId).toBe(1);
  });
});
