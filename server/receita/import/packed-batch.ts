/**
 * An establishment batch as a few long strings, for its trip to a document thread. Cloned as it
 * is, a batch of 2,000 rows is some 70,000 strings, each serialised by the importer's thread and
 * allocated again by the worker's (a tenth of the importer's thread); joined, each string is one
 * copy.
 *
 * The separators are lone surrogates, which no decoded text holds (latin1 gives none, and a
 * UTF-8 decoder turns any it meets into U+FFFD), so no field can be mistaken for one.
 */
import type { EstablishmentBatch } from './documents.ts';
import type { RootData } from './records.ts';

const FIELD = '\uD800';
const RECORD = '\uDBFF';
/** A staged part the root lacks (an empty string is a value). */
const ABSENT = '\uDC00';

export interface PackedBatch {
  /** Per row, its CNPJ then its fields. */
  rows: string;
  /** Per root: the root, its company, its Simples row, then its partners. */
  roots: string;
  taxRegimes?: Map<string, string[]>;
}

export function packBatch({ rows, roots, taxRegimes }: EstablishmentBatch): PackedBatch {
  const packedRows = rows.map(({ cnpj, fields }) => cnpj + FIELD + fields.join(FIELD));
  const packedRoots: string[] = [];
  for (const [root, { company, simples, partners }] of roots) {
    let packed = root + FIELD + (company ?? ABSENT) + FIELD + (simples ?? ABSENT);
    if (partners !== undefined) for (const partner of partners) packed += FIELD + partner;
    packedRoots.push(packed);
  }
  return { rows: packedRows.join(RECORD), roots: packedRoots.join(RECORD), ...(taxRegimes ? { taxRegimes } : {}) };
}

export function unpackBatch(packed: PackedBatch): EstablishmentBatch {
  const rows: EstablishmentBatch['rows'] = [];
  if (packed.rows !== '') {
    for (const row of packed.rows.split(RECORD)) {
      const fields = row.split(FIELD);
      rows.push({ cnpj: fields.shift()!, fields });
    }
  }
  const roots = new Map<string, RootData>();
  if (packed.roots !== '') {
    for (const entry of packed.roots.split(RECORD)) {
      const [root, company, simples, ...partners] = entry.split(FIELD);
      const data: RootData = {};
      if (company !== ABSENT) data.company = company!;
      if (simples !== ABSENT) data.simples = simples!;
      if (partners.length > 0) data.partners = partners;
      roots.set(root!, data);
    }
  }
  return { rows, roots, ...(packed.taxRegimes ? { taxRegimes: packed.taxRegimes } : {}) };
}
