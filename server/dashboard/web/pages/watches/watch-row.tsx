/** One watch in the table: what it follows, its kinds, status and last delivery, and Resume (when paused) and Delete. */
import { CHANGE_KINDS } from '../../../../../shared/change-kinds.ts';
import type { Out } from '../../api.ts';
import { Badge } from '../../components/badge.tsx';
import { formatTime, plural } from '../../format.ts';

export type Watch = Out<'getWatch'>;

/** What a watch follows, in a few words: "1,200 CNPJs", "state: SP, cnaes: 5611201". */
function following(watch: Watch): string {
  const filters = Object.entries(watch.filters ?? {}).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value)}`);
  return [watch.cnpjs ? plural(watch.cnpjs, 'CNPJ') : '', ...filters].filter(Boolean).join('; ');
}

function Status({ watch }: { watch: Watch }) {
  if (watch.status === 'active') return <Badge kind="active">Active</Badge>;
  return (
    <>
      <Badge kind="revoked">Paused</Badge>
      {watch.pausedReason === 'insufficient_credits' && <span class="muted">: not enough credits</span>}
      {watch.pausedReason === 'plan_required' && <span class="muted">: no active plan</span>}
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

export function WatchRow({ watch, busy, onResume, onDelete }: { watch: Watch; busy: boolean; onResume: () => void; onDelete: (button: HTMLButtonElement) => void }) {
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
