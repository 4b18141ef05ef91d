/**
 * Child process for the ledger's crash test: debits one workspace from several loops while other
 * loops read its credits (which, where movements wait in an outbox, copies them), printing each
 * debit once it is acknowledged, until the test kills it with SIGKILL.
 * Usage: node debit-until-killed.mjs DATA_DIR WORKSPACE_ID
 */
import { Credits } from '../../../../server/credits/ledger.ts';
import { openEmbeddedStore } from '../../../../server/store/embedded/store.ts';
import { Workspaces } from '../../../../server/credits/workspaces.ts';

const [dir, workspaceId] = process.argv.slice(2) as [string, string];
const store = await openEmbeddedStore(dir);
const credits = new Credits(store, new Workspaces(store));
const LOOPS = 6;

async function debits(k: number): Promise<never> {
  for (let n = 0; ; n++) {
    const detail = `debit-${k}-${n}`;
    const debit = await credits.debit(workspaceId, 1, 'test', detail);
    if (debit.ok) process.stdout.write(`${detail}\n`);
  }
}

async function reads(): Promise<never> {
  for (;;) {
    await credits.view(workspaceId);
    // As requests do, between reads: the embedded store answers a read without any I/O, so a loop
    // of them alone would hold the event loop, and the debits (which resume after pending I/O) never run.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

await Promise.all([...Array.from({ length: LOOPS }, (_, k) => debits(k)), ...Array.from({ length: LOOPS }, reads)]);
