/** Ledger movements as a table, newest first: when, what, how much, and the balance after. */
import { formatAmount, formatNumber, formatTime } from '../format.ts';
import { operationName } from '../operations.ts';
import { HeaderRow, ScrollingTable } from './table.tsx';

export interface MovementRow {
  movementId: string;
  at: string;
  amount: number;
  balanceAfter: number;
  operation: string;
  detail: string;
}

export function MovementsTable({ movements, caption }: { movements: MovementRow[]; caption: string }) {
  if (movements.length === 0) return <p class="muted">No movements yet.</p>;
  return (
    <ScrollingTable label={caption} class="movements">
      <caption class="sr-only">{caption}</caption>
      <HeaderRow columns={['When', 'Operation', 'Detail', 'Amount', 'Balance after']} numeric={['Amount', 'Balance after']} />
      <tbody>
        {movements.map((m) => (
          <tr key={m.movementId}>
            <td class="nowrap">{formatTime(m.at)}</td>
            <td>{operationName(m.operation)}</td>
            <td class="prose">{m.detail}</td>
            <td class={`num ${m.amount < 0 ? 'debit' : 'credit'}`}>{formatAmount(m.amount)}</td>
            <td class="num">{formatNumber(m.balanceAfter)}</td>
          </tr>
        ))}
      </tbody>
    </ScrollingTable>
  );
}
