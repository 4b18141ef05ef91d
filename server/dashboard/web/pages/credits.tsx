/**
 * Credits: the ledger newest first, a page at a time ("Older" / "Newer"), filtered by operation,
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
  const [draft, setDraft] = useState('');
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
  /** Operations seen so far, offered as suggestions for the filter. */
  const [seen, setSeen] = useState<string[]>([]);
  useEffect(() => {
    if (ledger.state.status !== 'ok') return;
    const ops = ledger.state.data.movements.map((m) => m.operation);
    setSeen((before) => (ops.every((op) => before.includes(op)) ? before : [...new Set([...before, ...ops])].sort()));
  }, [ledger.state]);

  function apply(event: Event) {
    event.preventDefault();
    setFilter(draft.trim());
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
          <form class="inline-form" onSubmit={apply} role="search" aria-label="Filter the ledger">
            <div class="field">
              <label for="operation-filter">Operation</label>
              <input
                id="operation-filter"
                type="search"
                list="operations-seen"
                placeholder="All operations"
                value={draft}
                onInput={(e) => setDraft(e.currentTarget.value)}
              />
              <datalist id="operations-seen">
                {seen.map((op) => (
                  <option key={op} value={op} />
                ))}
              </datalist>
            </div>
            <button type="submit">Filter</button>
            {filter && (
              <button
                type="button"
                class="link-button"
                onClick={() => {
                  setDraft('');
                  setFilter('');
                  setCursors([undefined]);
                }}
              >
                Show all
              </button>
            )}
          </form>
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
                {filter ? (
                  <>
                    Movements of <code>{filter}</code>,{' '}
                  </>
                ) : (
                  'All movements, '
                )}
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
