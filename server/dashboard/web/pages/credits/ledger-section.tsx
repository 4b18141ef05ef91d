/** The ledger: the operation filter, Export CSV and its progress, and the current page with its pager. */
import type { Out } from '../../api.ts';
import { MovementsTable } from '../../components/movements.tsx';
import { Loading, Problem } from '../../components/problem.tsx';
import { InlineSelect } from '../../components/select-field.tsx';
import { operationName } from '../../operations.ts';
import { useLedgerExport } from './ledger-export.ts';
import { useLedger, useOperationChoices } from './use-ledger.ts';

export function LedgerSection() {
  const ledger = useLedger();
  const choices = useOperationChoices(ledger.state);
  const exporter = useLedgerExport(ledger.filter);
  return (
    <section aria-labelledby="ledger-heading">
      <h2 id="ledger-heading">Ledger</h2>
      <div class="toolbar">
        <InlineSelect id="operation-filter" label="Operation" value={ledger.filter} onChange={ledger.choose}>
          <option value="">All operations</option>
          {choices.map((op) => (
            <option key={op.id} value={op.id}>
              {op.name}
            </option>
          ))}
        </InlineSelect>
        <button type="button" onClick={exporter.run} disabled={exporter.progress !== null}>
          Export CSV
        </button>
      </div>
      {exporter.progress && (
        <p class="muted" role="status">
          {exporter.progress}
        </p>
      )}
      {exporter.error !== null && <Problem error={exporter.error} />}
      <Loading state={ledger.state} label="the ledger">
        {(data) => <LedgerPage data={data} filter={ledger.filter} page={ledger.page} onNewer={ledger.newer} onOlder={ledger.older} />}
      </Loading>
    </section>
  );
}

function LedgerPage({ data, filter, page, onNewer, onOlder }: { data: Out<'listLedger'>; filter: string; page: number; onNewer: () => void; onOlder: (before: number) => void }) {
  return (
    <>
      <p class="muted">
        {filter ? `Movements of “${operationName(filter)}”, ` : 'All movements, '}
        newest first; page {page}.
      </p>
      <MovementsTable movements={data.movements} caption={`Ledger, page ${page}`} />
      <nav class="pager" aria-label="Ledger pages">
        <button type="button" disabled={page === 1} onClick={onNewer}>
          Newer
        </button>
        <button type="button" disabled={data.nextBefore === null} onClick={() => data.nextBefore !== null && onOlder(data.nextBefore)}>
          Older
        </button>
      </nav>
    </>
  );
}
