/**
 * What changed about one establishment between two releases, by kind (decisions.md, "Registry
 * changes"): the fields each kind compares (CHANGE_FIELDS), a hash of all of them so that an
 * import compares unchanged establishments by one number, and the diff of two records whose hashes
 * differ. Pure, so the import's worker threads compute the hash while they build rows.
 */
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
 * Names `changeHash` in a release file's `meta` (`change hash`): a comparison trusts the hashes of
 * the release it replaces only when they were made by this same function (change-file.ts).
 */
export const CHANGE_HASH = 'cyrb53 of the compared values';

/**
 * 53 bits of a hash of every compared field: an integer SQLite and JavaScript both hold exactly.
 * Two releases' hashes differ when a compared field does (a false "same" has odds of about
 * 2^-53). The values are fed in as they are, tagged by type, through two 32-bit lanes of
 * multiplicative mixing (cyrb53's): the JSON text and SHA-1 of the fields it replaced took a
 * seventh of an import's CPU for each establishment (issue 41). A release hashed otherwise (its
 * `meta` names another function, or none) has its hashes made again with this one by the
 * comparison, so changing this costs one slower comparison, never a wrong change.
 */
export function changeHash(record: object): number {
  const loose = record as Record<string, unknown>;
  h1 = 0xdeadbeef;
  h2 = 0x41c6ce57;
  for (const field of FIELDS) feed(loose[field]);
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (h2 & 0x1fffff) + (h1 >>> 0);
}

/** The hash's lanes, module-wide: a hash is computed start to end with nothing in between. */
let h1 = 0;
let h2 = 0;
/** A number's 8 bytes, as two 32-bit words. */
const float = new Float64Array(1);
const words = new Uint32Array(float.buffer);
/** Tags, beyond any UTF-16 code unit: a value's type and extent are part of what is hashed. */
const enum Tag {
  Null = 0x10000,
  False,
  True,
  Number,
  String,
  Array,
  Object,
  End,
}

function mix(word: number): void {
  h1 = Math.imul(h1 ^ word, 2654435761);
  h2 = Math.imul(h2 ^ word, 1597334677);
}

function feedText(text: string): void {
  mix(Tag.String);
  mix(text.length);
  for (let i = 0; i < text.length; i++) mix(text.charCodeAt(i));
}

/** A value as its JSON says it: null and absent alike, an object's members in order, those undefined left out. */
function feed(value: unknown): void {
  if (value === null || value === undefined) return mix(Tag.Null);
  if (typeof value === 'string') return feedText(value);
  if (typeof value === 'number') {
    float[0] = value;
    mix(Tag.Number);
    mix(words[0]!);
    return mix(words[1]!);
  }
  if (typeof value === 'boolean') return mix(value ? Tag.True : Tag.False);
  if (Array.isArray(value)) {
    mix(Tag.Array);
    mix(value.length);
    for (const item of value) feed(item);
    return;
  }
  mix(Tag.Object);
  const members = value as Record<string, unknown>;
  for (const name in members) {
    const member = members[name];
    if (member === undefined) continue;
    feedText(name);
    feed(member);
  }
  mix(Tag.End);
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
