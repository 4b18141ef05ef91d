/**
 * Operations as a person reads them: the names the server wrote into the shell (`data-operations`
 * on #app, the registry's summaries), and the ledger's own movements that no operation makes.
 */

interface OperationName {
  id: string;
  name: string;
  paid: boolean;
}

/** Movements of the ledger that are not an operation's debit (server/credits, the CLI's `credits grant`). */
const MOVEMENT_NAMES: Record<string, string> = {
  grant: 'Credits granted',
  trial_grant: 'Free trial credits',
  trial_expired: 'Unspent trial credits expired',
};
const REFUND = 'refund:';

function readNames(): OperationName[] {
  try {
    return JSON.parse(document.getElementById('app')?.dataset.operations ?? '[]') as OperationName[];
  } catch {
    return [];
  }
}

const operations = readNames();
const names = new Map<string, string>([...operations.map((op) => [op.id, op.name] as const), ...Object.entries(MOVEMENT_NAMES)]);

/** "Look up companies by CNPJ" for `lookupCnpjBatch`, "Refund: Export companies" for `refund:exportCompanies`; an unknown id as it is. */
export function operationName(id: string): string {
  if (id.startsWith(REFUND)) return `Refund: ${operationName(id.slice(REFUND.length))}`;
  return names.get(id) ?? id;
}

/** What the ledger can be filtered by: every operation that debits credits, then grants and expiries, by name. */
export function ledgerOperations(): Array<{ id: string; name: string }> {
  const paid = operations.filter((op) => op.paid).map(({ id, name }) => ({ id, name }));
  paid.sort((a, b) => a.name.localeCompare(b.name));
  return [...paid, ...Object.entries(MOVEMENT_NAMES).map(([id, name]) => ({ id, name }))];
}
