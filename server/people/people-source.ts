/** What a people source is, and how it says that it cannot answer a request. */
import type { ProviderSlot } from '../providers/providers.ts';
import type { Companies } from '../companies/companies.ts';
import type { PeopleFilters } from './filters.ts';
import type { People } from './people.ts';
import type { PersonView } from './person-view.ts';
import type { TraceContext } from '../lib/trace-context.ts';

/**
 * A source cannot answer this request (a filter it cannot apply, a missing key): the search goes
 * on with the other sources and reports this message as the source's `error`.
 */
export class SourceUnable extends Error {}

/** What the sources read: the workspace's stored people, the registry, the providers it can call. */
export interface PeopleSearchDeps {
  workspaceId: string;
  people: Pick<People, 'find'>;
  companies: Pick<Companies, 'search'>;
  /** The providers this workspace can call (for the remote sources). */
  slots: Map<string, ProviderSlot>;
}

export interface SourceCall extends PeopleSearchDeps {
  filters: PeopleFilters;
  limit: number;
  /** Aborted when the client leaves or the search has all the rows it needs. */
  signal: AbortSignal;
  /** The request's trace, for the remote sources' calls. */
  trace?: TraceContext;
  /** Where this source stopped on the previous page (search pages); undefined on the first. */
  position?: unknown;
}

/**
 * A source's rows in its own stable order, and where it stands after each: `after[i]` is the
 * position once rows 0..i are given, `end` the position once all of them are (null: nothing
 * follows). A page that gives only some of the rows continues, next page, from the last one given.
 */
export interface SourceRows {
  rows: PersonView[];
  after: unknown[];
  end: unknown;
}

export type PeopleSource = (call: SourceCall) => Promise<SourceRows>;
