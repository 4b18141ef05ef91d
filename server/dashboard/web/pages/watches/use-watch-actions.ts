/**
 * Resume and Delete: which watch is busy, and what each did, said on the page and to screen
 * readers; the list is updated from the server's answer without reading it again.
 */
import { useState } from 'preact/hooks';
import { call, type Out } from '../../api.ts';
import { useBusy } from '../../busy.ts';
import type { Outcome } from '../../components/outcome.tsx';
import { messageOf } from '../../components/problem.tsx';
import { announce } from '../../live.ts';
import type { Loader } from '../../load.ts';
import type { Watch } from './watch-row.tsx';

export function useWatchActions(watches: Loader<Out<'listWatches'>>) {
  const { busy, run } = useBusy();
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  function act(watch: Watch, what: string, task: () => Promise<void>) {
    setOutcome(null);
    return run(
      watch.watchId,
      async () => {
        await task();
        setOutcome({ kind: 'info', text: `Watch “${watch.name}” ${what}.` });
        announce(`Watch “${watch.name}” ${what}.`);
      },
      (err) => {
        setOutcome({ kind: 'error', text: `Watch “${watch.name}” was not ${what}: ${messageOf(err)}` });
        announce(`The watch was not ${what}: ${messageOf(err)}`);
      },
    );
  }

  const resume = (watch: Watch) =>
    act(watch, 'resumed', async () => {
      const resumed = await call('resumeWatch', { watchId: watch.watchId });
      watches.set((data) => ({ watches: data.watches.map((w) => (w.watchId === watch.watchId ? resumed : w)) }));
    });

  const remove = (watch: Watch) =>
    act(watch, 'deleted', async () => {
      await call('deleteWatch', { watchId: watch.watchId });
      watches.set((data) => ({ watches: data.watches.filter((w) => w.watchId !== watch.watchId) }));
    });

  return { busy, outcome, resume, remove };
}
