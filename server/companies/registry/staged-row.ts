/**
 * An establishment's document as a release file stages it (schema.ts's STAGE_COLUMNS): its key,
 * its encoded record, the columns the search filters on, the words of its full-text indexes and
 * its place in the release.
 * Pure, so the import's worker threads build the rows and the writer's thread only stores them.
 */
import type { CompanyDoc } from '../company-record.ts';
import { changeHash } from '../changes/change-diff.ts';
import { cnpjKey } from './cnpj-key.ts';
import type { RecordEncoder } from './record-codec.ts';
import type { StagedRow } from './schema.ts';

const flag = (value: boolean | null | undefined) => (value === true ? 1 : value === false ? 0 : null);
/** A multi-valued column searched with instr(): each value between spaces. */
const spaced = (values: readonly string[] | undefined) => (values && values.length > 0 ? ` ${values.join(' ')} ` : null);

/** `YYYY-MM-DD` as the number YYYYMMDD. */
export const dateNumber = (date: string) => Number(date.replaceAll('-', ''));

/** A staged row's place in the release (`pos` in schema.ts): its file's place among the release's files, then its line. */
export const stagedPos = (file: number, line: number) => file * 2 ** 32 + line;

/**
 * The staged rows of documents built one at a time (receita/import/documents.ts), each as its
 * document comes: a batch of one company's many establishments, each document holding all its
 * partners, is never held whole.
 */
export function* stagedRows(docs: Iterable<CompanyDoc>, encoder: RecordEncoder, rows: ReadonlyArray<{ pos: number }>): Generator<StagedRow> {
  let i = 0;
  for (const doc of docs) yield stagedRow(doc, encoder, rows[i++]!.pos);
}

export function stagedRow(doc: CompanyDoc, encoder: RecordEncoder, pos: number): StagedRow {
  const { _id, search, importRun: _run, ...record } = doc;
  const key = cnpjKey(_id);
  if (key === null) throw new Error(`${JSON.stringify(_id)} is not a CNPJ: a registry file keys documents by CNPJ`);
  return [
    key,
    encoder.encode(record),
    doc.address?.state ?? null,
    search.city,
    doc.registrationStatus ?? null,
    doc.establishment ?? null,
    doc.fiscalSize ?? null,
    doc.capital ?? null,
    doc.openingDate ? dateNumber(doc.openingDate) : null,
    flag(doc.simplesOption),
    flag(doc.meiOption),
    doc.legalNature?.code ?? null,
    flag(search.hasPhone),
    flag(search.hasEmail),
    search.federativeEntity ?? null,
    spaced(search.partnerAgeBands),
    spaced(search.taxRegimes),
    changeHash(record),
    search.name.length > 0 ? search.name.join(' ') : null,
    search.partners.length > 0 ? search.partners.join(' ') : null,
    search.activities.length > 0 ? JSON.stringify(search.activities.map(Number)) : null,
    search.partnerDocuments.length > 0 ? JSON.stringify(search.partnerDocuments) : null,
    pos,
  ];
}
