/**
 * What changed about one establishment between two releases, by kind (decisions.md, "Registry
 * changes"): the fields each kind compares (CHANGE_FIELDS), a hash of all of them so that an
 * import compares unchanged establishments by one number, and the diff of two records whose hashes
 * differ. Pure, so the import's worker threads compute the hash while they build rows.
 */
import { hash } from 'node:crypto';
import { CHANGE_FIELDS, type ChangeKind } from '../../../shared/change-kinds.ts';
import type { CompanyRecord, Partner } from '../company-record.ts';

/** The record's fields as any release holds them (a document, with its `release`). */
type Compared = Pick<CompanyRecord, 'cnpj' | 'name' | 'tradeName' | 'registrationStatus' | 'address'> & Record<string, unknown>;

const KINDS = Object.keys(CHANGE_FIELDS) as Array<keyof typeof CHANGE_FIELDS>;
const FIELDS = KINDS.flatMap((kind) => CHANGE_FIELDS[kind]);

/** A change as recorded: kind and fields; the release pair and the company are the store's. */
export interface FieldsChange {
  kind: ChangeKind;
  fields: Record<string, { from: unknown; to: unknown } | { added: Partner[]; removed: Partner[] }>;
}

/** Who a change is about, as the record of its side says (the new one; the old one for `removed`). */
export interface ChangeCompany {
  cnpj: string;
  name: string;
  tradeName: string | null;
  registrationStatus: CompanyRecord['registrationStatus'];
  city: string | null;
  state: string | null;
}

/** A value's JSON, `null` for a field the record lacks (an older document), so absent and null compare alike. */
const json = (value: unknown) => JSON.stringify(value ?? null);

/**
 * 48 bits of a SHA-1 of every compared field: an integer SQLite and JavaScript both hold exactly.
 * Two releases' hashes differ when a compared field does (a false "same" has odds of 2^-48). The
 * fields go in as one JSON array, one digest call: a call per field was a fifth of an import's
 * encoding work. (A release hashed otherwise is compared field by field where hashes differ, so
 * changing this costs one slower comparison, never a wrong change.)
 */
export function changeHash(record: object): number {
  const loose = record as Record<string, unknown>;
  // One-shot: a Hash object per establishment cost as much again as the digest (issue 41).
  return hash('sha1', JSON.stringify(FIELDS.map((field) => loose[field] ?? null)), 'buffer').readUIntBE(0, 6);
}

/** The kinds whose fields differ between `before` and `after`, each with its fields' values. */
export function diffRecords(before: object, after: object): FieldsChange[] {
  const old = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const changes: FieldsChange[] = [];
  for (const kind of KINDS) {
    if (kind === 'partners') {
      const partners = diffPartners((old.partners ?? []) as Partner[], (now.partners ?? []) as Partner[]);
      if (partners) changes.push({ kind, fields: { partners } });
      continue;
    }
    const fields: FieldsChange['fields'] = {};
    for (const field of CHANGE_FIELDS[kind]) {
      if (json(old[field]) !== json(now[field])) fields[field] = { from: old[field] ?? null, to: now[field] ?? null };
    }
    if (Object.keys(fields).length > 0) changes.push({ kind, fields });
  }
  return changes;
}

/** Partners who joined and who left, each compared whole (a partner whose record changed is one of each). */
function diffPartners(before: Partner[], after: Partner[]): { added: Partner[]; removed: Partner[] } | null {
  const was = new Set(before.map(json));
  const is = new Set(after.map(json));
  const added = after.filter((p) => !was.has(json(p)));
  const removed = before.filter((p) => !is.has(json(p)));
  return added.length + removed.length > 0 ? { added, removed } : null;
}

export function changeCompany(record: object): ChangeCompany {
  const r = record as Compared;
  return {
    cnpj: r.cnpj,
    name: r.name,
    tradeName: r.tradeName ?? null,
    registrationStatus: r.registrationStatus ?? null,
    city: r.address?.city ?? null,
    state: r.address?.state ?? null,
  };
}

/** Changes counted by kind, as the import reports them. */
export type ChangeCounts = Partial<Record<ChangeKind, number>>;

export function countInto(counts: ChangeCounts, kind: ChangeKind, n = 1): void {
  counts[kind] = (counts[kind] ?? 0) + n;
}
