/**
 * Rows of the per-company files (Empresas, Simples, Sócios) as what staging keeps of them: each
 * well-formed row's root, its compact text and its line. Pure, so the same rule runs in the
 * importer's thread and in the worker threads that read those files beside it
 * (document-worker.ts); a row whose root is not 8 letters or digits is reported and left out.
 */
import * as records from './records.ts';
import type { Problem, Row } from './rows.ts';

export type CompanyFileKind = 'empresas' | 'simples' | 'socios';

export const COMPANY_FILE_KINDS: ReadonlySet<string> = new Set<CompanyFileKind>(['empresas', 'simples', 'socios']);

/** A block of staged rows, as parallel arrays: they cross between threads as a few arrays, not an object per row. */
export interface StagedRows {
  roots: string[];
  /** An Empresas or Simples row's fields after the root, or a partner's (records.ts's FIELD_SEPARATOR between them). */
  texts: string[];
  lines: number[];
}

export function stageRows(
  kind: CompanyFileKind,
  fileName: string,
  rows: Row[],
  codes: records.Codes,
  report: (problem: Problem) => void,
): StagedRows {
  const staged: StagedRows = { roots: [], texts: [], lines: [] };
  for (const { fields, line } of rows) {
    const root = fields[0]!.trim().toUpperCase();
    if (!records.validRoot(root)) {
      report({ file: fileName, line, message: `cnpj_basico ${JSON.stringify(fields[0])} is not 8 letters or digits` });
      continue;
    }
    staged.roots.push(root);
    staged.texts.push(
      kind === 'empresas' ? records.empresa(fields, codes) : kind === 'simples' ? records.simples(fields) : records.socio(fields, codes),
    );
    staged.lines.push(line);
  }
  return staged;
}
