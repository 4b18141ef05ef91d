/** The workspace's watches, a row each; `busy` is the watch whose Resume or Delete is under way. */
import { HeaderRow, ScrollingTable } from '../../components/table.tsx';
import { WatchRow, type Watch } from './watch-row.tsx';

export function WatchTable({ watches, busy, onResume, onDelete }: { watches: Watch[]; busy: string | null; onResume: (w: Watch) => void; onDelete: (w: Watch, button: HTMLButtonElement) => void }) {
  return (
    <ScrollingTable label="Watches" class="watches">
      <HeaderRow columns={['Name', 'Follows', 'Kinds', 'Status', 'Last delivery']} actions />
      <tbody>
        {watches.map((watch) => (
          <WatchRow key={watch.watchId} watch={watch} busy={busy === watch.watchId} onResume={() => onResume(watch)} onDelete={(button) => onDelete(watch, button)} />
        ))}
      </tbody>
    </ScrollingTable>
  );
}
