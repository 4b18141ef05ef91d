/**
 * Establishment rows joined with what their company's files said, as the documents an import
 * writes. Pure, so the same code runs in the importer and in its worker thread.
 */
import { companyDocument, type CompanyDoc } from '../company-record.ts';
import * as records from './records.ts';
import { rootData, type StagedRoot } from './staging.ts';

/** What every document of one import run shares. */
export interface DocumentContext {
  lookups: records.Lookups;
  release: string;
  run: string;
}

/** Establishment rows whose CNPJs were checked, and the staged data of their roots. */
export interface EstablishmentBatch {
  rows: Array<{ cnpj: string; fields: string[] }>;
  roots: Map<string, StagedRoot>;
}

/** One at a time, so a caller that encodes each as it comes holds one document, not a batch of them. */
export function* companyDocuments({ rows, roots }: EstablishmentBatch, { lookups, release, run }: DocumentContext): Generator<CompanyDoc> {
  for (const { cnpj, fields } of rows) {
    const record = records.establishment(fields, cnpj, rootData(roots.get(cnpj.slice(0, 8))), lookups);
    yield companyDocument(record, { release, importRun: run });
  }
}
