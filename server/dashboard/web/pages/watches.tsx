/**
 * Watches: what each of the workspace's watches follows (its CNPJs or filters, its kinds), whether
 * it is active or paused and why, its last delivery, and Resume (a paused watch: what it missed is
 * sent) and Delete (confirmed in a dialog). Watches are created through the API. Its parts are in
 * watches/.
 */
import { call } from '../api.ts';
import { ConfirmDialog, useConfirmation } from '../components/confirm-dialog.tsx';
import { OutcomeNotice } from '../components/outcome.tsx';
import { Loading } from '../components/problem.tsx';
import { useLoad } from '../load.ts';
import { useWatchActions } from './watches/use-watch-actions.ts';
import type { Watch } from './watches/watch-row.tsx';
import { WatchTable } from './watches/watch-table.tsx';

/** The page: the list, and what Resume and Delete did, said on the page and to screen readers. */
export function Watches() {
  const watches = useLoad(() => call('listWatches'), []);
  const actions = useWatchActions(watches);
  // Once a row is deleted its button is gone: the focus goes to the page's heading.
  const confirmation = useConfirmation<Watch>(() => document.querySelector<HTMLElement>('main h1'));

  return (
    <>
      <h1 tabIndex={-1}>Watches</h1>
      <p class="lead">
        A watch sends each newly imported release’s registry changes for its CNPJs or search filters to your webhook, signed, at 1 credit per change. Create one with{' '}
        <code>POST /v1/api/watches</code>.
      </p>
      <OutcomeNotice outcome={actions.outcome} />
      <Loading state={watches.state} label="the watches">
        {({ watches: list }) => (list.length === 0 ? <p class="muted">No watches yet.</p> : <WatchTable watches={list} busy={actions.busy} onResume={actions.resume} onDelete={confirmation.ask} />)}
      </Loading>
      <ConfirmDialog id="delete" confirmation={confirmation} title={<>Delete “{confirmation.target?.name}”?</>} busy={actions.busy !== null} onConfirm={actions.remove}>
        Nothing more is sent for it. Deliveries already sent stay charged; one charged but not yet sent is refunded. This cannot be undone.
      </ConfirmDialog>
    </>
  );
}
