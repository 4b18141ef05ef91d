/**
 * A person as every people source returns it: the same field names whatever the source, so a
 * row can be merged with its duplicates and handed back to hydrate or enrich unchanged.
 */
import { foldText } from '../../shared/fold-text.ts';
import type { Person } from '../../shared/types.ts';
import type { PersonDoc } from './people.ts';

/** The contract's Person: what every source's rows look like. */
export type PersonView = Person;

/** A row of an imported list or of the demo set. */
export function listPersonView(doc: PersonDoc, source: string): PersonView {
  const { _id, workspaceId, search, updatedAt, list, ...record } = doc;
  return { ...record, list, source };
}

/**
 * Who a row is, for merging: a profile URL, else an email, else name and company. Two rows of
 * the same person from different sources agree on at least one of these in practice.
 */
export function identityKeys(person: PersonView): string[] {
  const keys: string[] = [];
  if (person.linkedinUrl) keys.push(`li:${person.linkedinUrl.toLowerCase().replace(/^https?:\/\/(www\.)?/, '').replace(/\/+$/, '')}`);
  if (person.email) keys.push(`em:${person.email.toLowerCase()}`);
  const org = person.domain ?? person.company;
  if (org) keys.push(`nc:${foldText(person.name)}|${foldText(org)}`);
  return keys;
}

/**
 * Rows merged by identity, in the order given: the first row of a person keeps its place and
 * its values, later duplicates only fill what it lacks, and `sources` names them all.
 */
export class PeopleMerge {
  readonly rows: PersonView[] = [];
  private readonly byKey = new Map<string, PersonView>();

  /** Adds a row; returns it when it is a new person, or null when it merged into an earlier one. */
  add(person: PersonView): PersonView | null {
    const keys = identityKeys(person);
    const earlier = keys.map((k) => this.byKey.get(k)).find(Boolean);
    if (earlier) {
      fillMissing(earlier, person);
      const sources = earlier.sources ?? [earlier.source];
      if (!sources.includes(person.source)) earlier.sources = [...sources, person.source];
      for (const key of keys) this.byKey.set(key, earlier);
      return null;
    }
    const row = { ...person };
    for (const key of keys) this.byKey.set(key, row);
    this.rows.push(row);
    return row;
  }
}

/** Copies into `target` the values of `from` that it lacks (null or absent). */
function fillMissing<T extends object>(target: T, from: T): void {
  for (const field of Object.keys(from) as Array<keyof T>) {
    if (from[field] !== null && from[field] !== undefined && (target[field] === null || target[field] === undefined)) target[field] = from[field];
  }
}
