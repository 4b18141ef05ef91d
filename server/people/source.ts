/** What a people source is, and how it says that it cannot answer a request. */
import type { HandlerContext } from '../pipeline/handler.ts';
import type { ProviderSlot } from '../providers/providers.ts';
import type { PeopleFilters } from './filters.ts';
import type { PersonView } from './person-view.ts';

/**
 * A source cannot answer this request (a filter it cannot apply, a missing key): the search goes
 * on with the other sources and reports this message as the source's `error`.
 */
export class SourceUnable extends Error {}

export interface SourceCall {
  filters: PeopleFilters;
  limit: number;
  ctx: HandlerContext;
  /** Aborted when the client leaves or the search has all the rows it needs. */
  signal: AbortSignal;
  /** The providers this workspace can call (for the remote sources). */
  slots: Map<string, ProviderSlot>;
}

export type PeopleSource = (call: SourceCall) => Promise<PersonView[]>;
