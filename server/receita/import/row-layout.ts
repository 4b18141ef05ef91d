/**
 * How each kind of release file is split into rows: its field count and CSV layout. The importer
 * reads with it, and so does bench:cnpj's import floor, which must split exactly as it does.
 */
import { TAX_REGIME_COLUMNS } from '../../companies/tax-regimes.ts';
import { COLUMNS } from './records.ts';
import { LOOKUP_KINDS, type FileKind, type LookupKind } from './release-files.ts';

export interface RowLayout {
  columns: number;
  layout: { delimiter: string; header?: string; splitFirst?: number };
}

export function rowLayoutOf(kind: FileKind): RowLayout {
  // The tax-regime files are comma-separated with a header row, published apart from the rest.
  if (kind === 'regimes') return { columns: TAX_REGIME_COLUMNS, layout: { delimiter: ',', header: 'ano' } };
  if (LOOKUP_KINDS.includes(kind as LookupKind)) return { columns: COLUMNS.lookup, layout: { delimiter: ';' } };
  const columns = COLUMNS[kind as keyof typeof COLUMNS];
  // An establishment's fields past its CNPJ are split by the thread that builds its document.
  return kind === 'estabelecimentos' ? { columns, layout: { delimiter: ';', splitFirst: 3 } } : { columns, layout: { delimiter: ';' } };
}
