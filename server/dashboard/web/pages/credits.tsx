/**
 * Credits: the ledger newest first, a page at a time ("Older" / "Newer"), filtered by operation (a list of names),
 * exported as CSV (every page of the current filter, built in the browser), and the consumption
 * per day.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type Out } from '../api.ts';
import { ChartPlaceholder, UsageChart } from '../chart.tsx';
import { download, toCsv } from '../csv.ts';
import { formatNumber, plural } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { MovementsTable } from '../movements.tsx';
import { ledgerOperations, operationName } from '../operations.ts';
import { Loading, messageOf, Problem } from '../problem.tsx';

type Movement = Out<'listLedger'>['movements'][number];

export const PAGE_SIZE = 25;
/** The most the ledger gives per request: the export reads in pages this large. */
const EXPORT_PAGE = 200;
const RANGES = [7, 30, 90] as const;

/** Every movement of the filter, newest first, page after page until the ledger says there is no more. */
async function allMovements(operation: string | undefined, onProgress: (count: number) => void): Promise<Movement[]> {
  const all: Movement[] = [];
  let before: number | undefined;
  for (;;) {
    const page = await call('listLedger', { limit: EXPORT_PAGE, ...(before !== undefined ? { before } : {}), ...(operation ? { operation } : {}) });
    all.push(...page.movements);
    onProgress(all.length);
    if (page.nextBefore === null || page.movements.length === 0) return all;
    before = page.nextBefore;
  }
}

export function ledgerCsv(movements: Movement[]): string {
  return toCsv([
    ['at', 'operation', 'detail', 'amount', 'balanceAfter', 'movementId'],
    ...movements.map((m) => [m.at, m.operation, m.detail, m.amount, m.balanceAfter, m.movementId]),
  ]);
}

export function Credits() {
  const [filter, setFilter] = useState('');
  /** The `before` cursor of each page shown so far: the first page has none. */
  const [cursors, setCursors] = useState<Array<number | undefined>>([undefined]);
  const before = cursors[cursors.length - 1];
  const ledger = useLoad(
    () => call('listLedger', { limit: PAGE_SIZE, ...(before !== undefined ? { before } : {}), ...(filter ? { operation: filter } : {}) }),
    [filter, before],
  );
  const credits = useLoad(() => call('getCredits'), []);
  const [days, setDays] = useState<number>(30);
  const usage = useLoad(() => call('getUsage', { days }), [days]);
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  /** Movements seen so far that the list does not name (a refund): offered too. */
  const [seen, setSeen] = useState<string[]>([]);
  useEffect(() => {
    if (ledger.state.status !== 'ok') return;
    const known = new Set(ledgerOperations().map((op) => op.id));
    const ops = ledger.state.data.movements.map((m) => m.operation).filter((op) => !known.has(op));
    setSeen((before) => (ops.every((op) => before.includes(op)) ? before : [...new Set([...before, ...ops])].sort()));
  }, [ledger.state]);
  const choices = [...ledgerOperations(), ...seen.map((id) => ({ id, name: operationName(id) }))];

  function choose(operation: string) {
    setFilter(operation);
    setCursors([undefined]);
  }

  async function exportCsv() {
    setExportError(null);
    setExporting('Reading the ledger…');
    try {
      const movements = await allMovements(filter || undefined, (n) => setExporting(`Reading the ledger… ${plural(n, 'movement')}`));
      const stamp = new Date().toISOString().slice(0, 10);
      download(`prospecta-ledger${filter ? `-${filter.replace(/[^\w.-]+/g, '_')}` : ''}-${stamp}.csv`, ledgerCsv(movements));
      announce(`Exported ${plural(movements.length, 'movement')} as CSV.`);
    } catch (err) {
      setExportError(err);
      announce(`The export failed: ${messageOf(err)}`);
    } finally {
      setExporting(null);
    }
  }

  const page = cursors.length;
  return (
    <>
      <h1 tabIndex={-1}>Credits</h1>
      <Loading state={credits.state} label="the balance">
        {(c) => (
          <p class="lead">
            Balance <strong>{formatNumber(c.balance)}</strong> credits; {formatNumber(c.consumed)} consumed since the workspace was created.
          </p>
        )}
      </Loading>

      <section aria-labelledby="ledger-heading">
        <h2 id="ledger-heading">Ledger</h2>
        <div class="toolbar">
          <div class="field inline">
            <label for="operation-filter">Operation</label>
            <select id="operation-filter" value={filter} onChange={(e) => choose(e.currentTarget.value)}>
              <option value="">All operations</option>
              {choices.map((op) => (
                <option key={op.id} value={op.id}>
                  {op.name}
                </option>
              ))}
            </select>
          </div>
          <button type="button" onClick={exportCsv} disabled={exporting !== null}>
            Export CSV
          </button>
        </div>
        {exporting && (
          <p class="muted" role="status">
            {exporting}
          </p>
        )}
        {exportError !== null && <Problem error={exportError} />}
        <Loading state={ledger.state} label="the ledger">
          {(data) => (
            <>
              <p class="muted">
                {filter ? `Movements of “${operationName(filter)}”, ` : 'All movements, '}
                newest first; page {page}.
              </p>
              <MovementsTable movements={data.movements} caption={`Ledger, page ${page}`} />
              <nav class="pager" aria-label="Ledger pages">
                <button type="button" disabled={page === 1} onClick={() => setCursors(cursors.slice(0, -1))}>
                  Newer
                </button>
                <button
                  type="button"
                  disabled={data.nextBefore === null}
                  onClick={() => data.nextBefore !== null && setCursors([...cursors, data.nextBefore])}
                >
                  Older
                </button>
              </nav>
            </>
          )}
        </Loading>
      </section>

      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Consumption per day</h2>
        <div class="field inline">
          <label for="usage-range">Period</label>
          <select id="usage-range" value={String(days)} onChange={(e) => setDays(Number(e.currentTarget.value))}>
            {RANGES.map((n) => (
              <option key={n} value={String(n)}>
                Last {n} days
              </option>
            ))}
          </select>
        </div>
        <Loading state={usage.state} label="the consumption" placeholder={<ChartPlaceholder />}>
          {(u) => (
            <>
              <UsageChart days={u.days} title="Credits consumed per day" />
              <p id="memory-saved">
                Enrichment memory saved {plural(u.memorySaved.credits, 'credit')} this month ({plural(u.memorySaved.answers, 'answer')} given
                again without calling a provider).
              </p>
            </>
          )}
        </Loading>
      </section>
    </>
  );
}
