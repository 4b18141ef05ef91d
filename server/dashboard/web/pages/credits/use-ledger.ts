/**
 * The ledger a page at a time, newest first, filtered by operation: the `before` cursor of each
 * page shown so far is kept, so "Newer" goes back without asking the server where it was.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type Out } from '../../api.ts';
import { useLoad, type Loaded } from '../../load.ts';
import { ledgerOperations, operationName } from '../../operations.ts';

export const PAGE_SIZE = 25;

export function useLedger() {
  const [filter, setFilter] = useState('');
  /** The `before` cursor of each page shown so far: the first page has none. */
  const [cursors, setCursors] = useState<Array<number | undefined>>([undefined]);
  const before = cursors[cursors.length - 1];
  const ledger = useLoad(
    () => call('listLedger', { limit: PAGE_SIZE, ...(before !== undefined ? { before } : {}), ...(filter ? { operation: filter } : {}) }),
    [filter, before],
  );
  return {
    filter,
    state: ledger.state,
    /** 1 for the newest page. */
    page: cursors.length,
    choose(operation: string) {
      setFilter(operation);
      setCursors([undefined]);
    },
    newer: () => setCursors(cursors.slice(0, -1)),
    older: (nextBefore: number) => setCursors([...cursors, nextBefore]),
  };
}

/** What the filter offers: every operation that debits, grants and expiries, then movements seen that those do not name (a refund). */
export function useOperationChoices(ledger: Loaded<Out<'listLedger'>>): Array<{ id: string; name: string }> {
  const [seen, setSeen] = useState<string[]>([]);
  useEffect(() => {
    if (ledger.status !== 'ok') return;
    const known = new Set(ledgerOperations().map((op) => op.id));
    const ops = ledger.data.movements.map((m) => m.operation).filter((op) => !known.has(op));
    setSeen((before) => (ops.every((op) => before.includes(op)) ? before : [...new Set([...before, ...ops])].sort()));
  }, [ledger]);
  return [...ledgerOperations(), ...seen.map((id) => ({ id, name: operationName(id) }))];
}
