/**
 * People the service can search without calling anyone: lists a workspace imported, and the
 * shared demo set (no workspace). Each person keeps folded words beside its fields so that both
 * stores can index and match them the way the company search does.
 */
import { createHash } from 'node:crypto';
import type { Person } from '../../shared/types.ts';
import { words } from '../lib/text.ts';
import type { Collection, Filter, IndexDeclaration, Store } from '../store/port.ts';

/** What a list (or the demo set) holds about a person: those of the contract's Person fields, each present (null when unknown). */
export type PersonRecord = Required<
  Pick<
    Person,
    | 'name'
    | 'firstName'
    | 'lastName'
    | 'title'
    | 'seniority'
    | 'department'
    | 'email'
    | 'emailStatus'
    | 'phone'
    | 'linkedinUrl'
    | 'company'
    | 'domain'
    | 'industry'
    | 'companySize'
    | 'companyLocation'
    | 'location'
    | 'country'
    | 'revenueRange'
    | 'skills'
    | 'technologies'
    | 'languages'
  >
>;

export interface PersonDoc extends PersonRecord {
  _id: string;
  /** Null for the demo set, which every workspace can search. */
  workspaceId: string | null;
  list: string;
  search: {
    title: string[];
    company: string[];
    industry: string[];
    location: string[];
    companyLocation: string[];
    skills: string[];
    technologies: string[];
    languages: string[];
  };
  updatedAt: Date;
}

export const peopleIndexes: IndexDeclaration[] = [
  { collection: 'people', keys: { workspaceId: 1 } },
  { collection: 'people', keys: { 'search.title': 1 } },
  { collection: 'people', keys: { 'search.company': 1 } },
  { collection: 'people', keys: { domain: 1 } },
];

const many = (values: string[]) => [...new Set(values.flatMap((v) => words(v)))];

/**
 * The same person imported twice (a re-run, a newer file) is one document: identified by email,
 * else by profile URL, else by name and company.
 */
export function personId(workspaceId: string | null, record: PersonRecord): string {
  const identity = record.email ?? record.linkedinUrl ?? `${words(record.name).join(' ')}|${record.domain ?? words(record.company).join(' ')}`;
  return createHash('sha256').update(`${workspaceId ?? 'demo'}\n${identity.toLowerCase()}`).digest('hex').slice(0, 32);
}

export function personDocument(workspaceId: string | null, list: string, record: PersonRecord, now = new Date()): PersonDoc {
  return {
    _id: personId(workspaceId, record),
    workspaceId,
    list,
    ...record,
    search: {
      title: words(record.title),
      company: many([record.company ?? '', record.domain?.split('.')[0] ?? '']),
      industry: words(record.industry),
      location: many([record.location ?? '', record.country ?? '']),
      companyLocation: words(record.companyLocation),
      skills: many(record.skills),
      technologies: many(record.technologies),
      languages: many(record.languages),
    },
    updatedAt: now,
  };
}

export class People {
  readonly collection: Collection<PersonDoc>;

  constructor(store: Store) {
    this.collection = store.collection<PersonDoc>('people');
  }

  /** Writes people by id: new ones inserted, known ones replaced. Returns how many were new. */
  async upsert(docs: PersonDoc[]): Promise<{ inserted: number; updated: number }> {
    if (docs.length === 0) return { inserted: 0, updated: 0 };
    const result = await this.collection.bulkWrite(
      docs.map((doc) => ({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } })),
    );
    return { inserted: result.upsertedCount, updated: result.matchedCount };
  }

  /** The first `limit` people matching, in id order, so the same query answers the same. */
  find(filter: Filter<PersonDoc>, limit: number): Promise<PersonDoc[]> {
    return this.collection.find(filter, { sort: { _id: 1 }, limit }).toArray();
  }

  count(filter: Filter<PersonDoc>): Promise<number> {
    return this.collection.countDocuments(filter);
  }
}
