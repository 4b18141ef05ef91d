/**
 * Establishment rows joined with what their company's files said, as the documents an import
 * writes. Pure, so the same code runs in the importer and in its worker thread.
 */
import { companyDocument, type CompanyDoc } from '../../companies/company-record.ts';
import * as records from './records.ts';
import { quotedFields } from './csv-splitter.ts';

/** What every document of one import run shares. */
export interface DocumentContext {
  lookups: records.Lookups;
  release: string;
  run: string;
}

/** Establishment rows whose CNPJs were checked, and the staged data of their roots. */
export interface EstablishmentBatch {
  /** Each row's fields, or its `quoted` text that holds them (see SplitRow in csv-splitter.ts). */
  rows: Array<{ cnpj: string; fields: string[] } | { cnpj: string; quoted: string }>;
  roots: Map<string, records.RootData>;
  /** The tax-regime search keys of the CNPJs that have any (see tax-regimes.ts). */
  taxRegimes?: Map<string, string[]>;
}

/**
 * One at a time, so a caller that encodes each as it comes holds one document, not a batch of
 * them. Codes the release's tables lack are counted into `unknown`.
 */
export function* companyDocuments(
  { rows, roots, taxRegimes }: EstablishmentBatch,
  { lookups, release, run }: DocumentContext,
  unknown: records.UnknownCodes = {},
): Generator<CompanyDoc> {
  const codes = new records.Codes(lookups, unknown);
  for (const row of rows) {
    const { cnpj } = row;
    const fields = 'quoted' in row ? quotedFields(row.quoted) : row.fields;
    const record = records.establishment(fields, cnpj, roots.get(cnpj.slice(0, 8)), codes);
    yield companyDocument(record, { release, importRun: run }, taxRegimes?.get(cnpj));
  }
}
