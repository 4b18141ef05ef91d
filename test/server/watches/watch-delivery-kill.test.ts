/**
 * Issue 42: a server killed with SIGKILL while it sends a new release's changes to many watches,
 * then restarted on the same DATA_DIR. Every watch receives its changes at least once, each part
 * under one `Prospecta-Delivery` id however often it is sent, and is charged for them once.
 */
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.ts';
import { webhookReceiver } from '../../helpers/webhook-receiver.ts';
import { commandHere, workspaceHere } from '../../helpers/commands.ts';
import { apiOf, runCli, startServer } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { cnpj, expectedKinds, writeReleasePair } from '../companies/change-releases.ts';

const WATCHES = 40;
const SECRET = 'kill-test-watch-secret';
/** The changes each watch of every CNPJ of the pair receives. */
const CHANGES = Object.values(expectedKinds).flat().length;

describe('kill -9 while watches are sent a release', () => {
  it('every watch gets its changes after the restart, each part under one delivery id, charged once', { timeout: 300_000 }, async () => {
    const byWatch = new Map<string, Set<string>>();
    const url = await webhookReceiver((delivery: { watchId: string }, headers) => {
      const ids = byWatch.get(delivery.watchId) ?? new Set<string>();
      ids.add(String(headers['prospecta-delivery']));
      byWatch.set(delivery.watchId, ids);
    });

    const env = { DATA_DIR: await tempDir('watch-kill'), JOBS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true' };
    const releases = await writeReleasePair(await tempDir('watch-kill-releases'));
    expect(await commandHere(env, 'import cnpj', { dir: releases.first })).toMatchObject({ complete: true });
    const { apiKey } = await workspaceHere(env, 'watches', WATCHES * CHANGES);

    let server = await startServer(env);
    const api = apiOf(() => server, apiKey);
    const before = (await api('GET', '/credits')).balance as number;
    const cnpjs = [...Object.keys(expectedKinds), cnpj.same];
    for (let i = 0; i < WATCHES; i++) {
      const watch = await api('POST', '/watches', { name: `watch ${i}`, cnpjs, webhook: { url, secret: SECRET } });
      expect(watch.watchId, JSON.stringify(watch)).toBeDefined();
    }

    // The CLI imports the newer release beside the running server, which starts sending; it dies among the deliveries.
    const imported = await runCli(['import', 'cnpj', '--dir', releases.second], env);
    expect(imported.code, imported.stderr).toBe(0);
    await eventually(() => byWatch.size >= 3, { timeoutMs: 60_000, intervalMs: 1, message: 'some watches sent their changes' });
    server.child.kill('SIGKILL');
    await server.exited;
    // Killed among them (a workspace has at most 16 deliveries out at once, and 20 parts are paid a pass).
    expect(byWatch.size).toBeLessThan(WATCHES);
    server = await startServer(env);

    await eventually(() => byWatch.size === WATCHES, { timeoutMs: 120_000, message: `every watch's delivery (${byWatch.size} of ${WATCHES} so far)` });
    for (const [watchId, ids] of byWatch) expect(ids.size, watchId).toBe(1);
    type Listed = Array<{ lastDelivery?: { changes: number } }>;
    await eventually(async () => ((await api('GET', '/watches')).watches as Listed).every((w) => w.lastDelivery?.changes === CHANGES));
    expect(before - (await api('GET', '/credits')).balance).toBe(WATCHES * CHANGES);
  });
});
