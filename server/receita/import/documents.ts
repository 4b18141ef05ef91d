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

/**
 * An establishment row whose CNPJ was checked: its fields, or its `quoted` text that holds them
 * (see SplitRow in csv-splitter.ts), and its place in the release (registry/staged-row.ts's `stagedPos`).
 */
export type EstablishmentRow = ({ fields: string[] } | { quoted: string }) & { cnpj: string; pos: number };

/** What establishment rows join: the staged data of their roots, and their tax regimes' search keys (tax-regimes.ts). */
export interface Joined {
  roots: Map<string, records.RootData>;
  taxRegimes?: Map<string, string[]>;
}

/** Establishment rows and what they join. */
export interface EstablishmentBatch extends Joined {
  rows: EstablishmentRow[];
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
