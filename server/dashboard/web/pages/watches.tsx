/**
 * Watches: what each of the workspace's watches follows (its CNPJs or filters, its kinds), whether
 * it is active or paused and why, its last delivery, and Resume (a paused watch: what it missed is
 * sent) and Delete (confirmed in a dialog). Watches are created through the API.
 */
import { useRef, useState } from 'preact/hooks';
import { CHANGE_KINDS } from '../../../../shared/change-kinds.ts';
import { call, type Out } from '../api.ts';
import { formatTime, plural } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { Loading, messageOf } from '../problem.tsx';

type Watch = Out<'getWatch'>;
type Outcome = { kind: 'info' | 'error'; text: string } | null;

/** What a watch follows, in a few words: "1,200 CNPJs", "state: SP, cnaes: 5611201". */
function following(watch: Watch): string {
  const filters = Object.entries(watch.filters ?? {}).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  return [watch.cnpjs ? plural(watch.cnpjs, 'CNPJ') : '', ...filters].filter(Boolean).join('; ');
}

function Status({ watch }: { watch: Watch }) {
  if (watch.status === 'active') return <span class="badge active">Active</span>;
  return (
    <>
      <span class="badge revoked">Paused</span>
      {watch.pausedReason === 'insufficient_credits' && <span class="muted">: not enough credits</span>}
    </>
  );
}

function LastDelivery({ watch }: { watch: Watch }) {
  const last = watch.lastDelivery;
  if (!last) return <span class="muted">None yet</span>;
  return (
    <>
      Release {last.release}: {plural(last.changes, 'change')}, {formatTime(last.at)}
    </>
  );
}

function WatchRow({ watch, busy, onResume, onDelete }: { watch: Watch; busy: boolean; onResume: () => void; onDelete: (button: HTMLButtonElement) => void }) {
  const id = `watch-${watch.watchId}`;
  return (
    <tr>
      <th scope="row" id={id}>
        {watch.name}
      </th>
      <td>{following(watch)}</td>
      <td>{watch.kinds.length === CHANGE_KINDS.length ? 'All' : watch.kinds.join(', ')}</td>
      <td>
        <Status watch={watch} />
      </td>
      <td class="nowrap">
        <LastDelivery watch={watch} />
      </td>
      <td class="nowrap">
        {watch.status === 'paused' && (
          <button type="button" aria-describedby={id} disabled={busy} onClick={onResume}>
            Resume
          </button>
        )}{' '}
        <button type="button" class="danger" aria-describedby={id} disabled={busy} onClick={(e) => onDelete(e.currentTarget)}>
          Delete
        </button>
      </td>
    </tr>
  );
}

function DeleteDialog({ dialog, target, busy, onConfirm, onClosed }: { dialog: { current: HTMLDialogElement | null }; target: Watch | null; busy: boolean; onConfirm: () => void; onClosed: () => void }) {
  return (
    <dialog ref={dialog} aria-labelledby="delete-heading" aria-describedby="delete-text" onClose={onClosed}>
      <h2 id="delete-heading">Delete “{target?.name}”?</h2>
      <p id="delete-text">Nothing more is sent for it. Deliveries already sent stay charged. This cannot be undone.</p>
      <div class="actions">
        <button type="button" autoFocus onClick={() => dialog.current?.close()}>
          Cancel
        </button>
        <button type="button" class="danger" disabled={busy} onClick={onConfirm}>
          Confirm
        </button>
      </div>
    </dialog>
  );
}

function WatchTable({ watches, busy, onResume, onDelete }: { watches: Watch[]; busy: string | null; onResume: (w: Watch) => void; onDelete: (w: Watch, button: HTMLButtonElement) => void }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Watches">
      <table class="watches">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Follows</th>
            <th scope="col">Kinds</th>
            <th scope="col">Status</th>
            <th scope="col">Last delivery</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {watches.map((watch) => (
            <WatchRow key={watch.watchId} watch={watch} busy={busy === watch.watchId} onResume={() => onResume(watch)} onDelete={(button) => onDelete(watch, button)} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The page: the list, and what Resume and Delete did, said on the page and to screen readers. */
export function Watches() {
  const watches = useLoad(() => call('listWatches'), []);
  const dialog = useRef<HTMLDialogElement>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const [target, setTarget] = useState<Watch | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome>(null);

  async function act(watch: Watch, what: string, run: () => Promise<void>) {
    setBusy(watch.watchId);
    setOutcome(null);
    try {
      await run();
      setOutcome({ kind: 'info', text: `Watch “${watch.name}” ${what}.` });
      announce(`Watch “${watch.name}” ${what}.`);
    } catch (err) {
      setOutcome({ kind: 'error', text: `Watch “${watch.name}” was not ${what}: ${messageOf(err)}` });
      announce(`The watch was not ${what}: ${messageOf(err)}`);
    } finally {
      setBusy(null);
    }
  }

  const resume = (watch: Watch) =>
    act(watch, 'resumed', async () => {
      const resumed = await call('resumeWatch', { watchId: watch.watchId });
      watches.set((data) => ({ watches: data.watches.map((w) => (w.watchId === watch.watchId ? resumed : w)) }));
    });

  async function confirmDelete() {
    const watch = target;
    if (!watch) return;
    await act(watch, 'deleted', async () => {
      await call('deleteWatch', { watchId: watch.watchId });
      watches.set((data) => ({ watches: data.watches.filter((w) => w.watchId !== watch.watchId) }));
    });
    dialog.current?.close();
  }

  function ask(watch: Watch, button: HTMLButtonElement) {
    opener.current = button;
    setTarget(watch);
    dialog.current?.showModal();
  }

  function closed() {
    setTarget(null);
    // Back to where the keyboard was, or to the heading once that row is gone (deleted).
    (opener.current?.isConnected ? opener.current : (document.querySelector('main h1') as HTMLElement | null))?.focus();
  }

  return (
    <>
      <h1 tabIndex={-1}>Watches</h1>
      <p class="lead">
        A watch sends each newly imported release’s registry changes for its CNPJs or search filters to your webhook, signed, at 1 credit per change. Create one with{' '}
        <code>POST /v1/api/watches</code>.
      </p>
      {outcome && (
        <div class={`notice ${outcome.kind}`} role={outcome.kind === 'error' ? 'alert' : undefined}>
          <p>{outcome.text}</p>
        </div>
      )}
      <Loading state={watches.state} label="the watches">
        {({ watches: list }) => (list.length === 0 ? <p class="muted">No watches yet.</p> : <WatchTable watches={list} busy={busy} onResume={resume} onDelete={ask} />)}
      </Loading>
      <DeleteDialog dialog={dialog} target={target} busy={busy !== null} onConfirm={() => void confirmDelete()} onClosed={closed} />
    </>
  );
}
