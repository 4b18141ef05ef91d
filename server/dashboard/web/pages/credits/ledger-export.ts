/**
 * The ledger as CSV: every page of the current filter, newest first, read and built in the
 * browser, with the progress said as it reads.
 */
import { useState } from 'preact/hooks';
import { call, type Out } from '../../api.ts';
import { messageOf } from '../../components/problem.tsx';
import { download, toCsv } from '../../csv.ts';
import { plural } from '../../format.ts';
import { announce } from '../../live.ts';

type Movement = Out<'listLedger'>['movements'][number];

/** The most the ledger gives per request: the export reads in pages this large. */
const EXPORT_PAGE = 200;

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

/** `progress` is what the export is doing (null: none under way); `error` what stopped the last one. */
export function useLedgerExport(filter: string) {
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function run() {
    setError(null);
    setProgress('Reading the ledger…');
    try {
      const movements = await allMovements(filter || undefined, (n) => setProgress(`Reading the ledger… ${plural(n, 'movement')}`));
      const stamp = new Date().toISOString().slice(0, 10);
      download(`prospecta-ledger${filter ? `-${filter.replace(/[^\w.-]+/g, '_')}` : ''}-${stamp}.csv`, ledgerCsv(movements));
      announce(`Exported ${plural(movements.length, 'movement')} as CSV.`);
    } catch (err) {
      setError(err);
      announce(`The export failed: ${messageOf(err)}`);
    } finally {
      setProgress(null);
    }
  }

  return { progress, error, run };
}
