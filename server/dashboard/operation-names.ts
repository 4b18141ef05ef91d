/**
 * What the dashboard calls each operation: its registry summary ("Look up companies by CNPJ"),
 * never its id (`lookupCnpjBatch`). Written into the app's shell (`data-operations`), so the
 * browser's bundle carries no registry, and the names are the registry's own.
 */
import { operations } from '../../shared/operations/index.ts';
import { isPaid } from '../../shared/operations/types.ts';

export interface OperationName {
  id: string;
  name: string;
  /** Debits credits in its own name: the ledger's filter offers it. */
  paid: boolean;
}

export const OPERATION_NAMES: readonly OperationName[] = Object.entries(operations).map(([id, op]) => ({ id, name: op.summary, paid: isPaid(op) }));
