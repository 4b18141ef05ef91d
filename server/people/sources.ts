/**
 * The people sources by name. Lists and the demo set are documents in the store and honour
 * every filter; the registry and Apollo answer what they can (see their modules).
 */
import type { Filter } from '../store/port.ts';
import { PEOPLE_SOURCES } from '../../shared/schemas/search.ts';
import { searchApolloPeople } from './apollo-people.ts';
import { listQuery } from './filters.ts';
import type { PersonDoc } from './people.ts';
import { listPersonView } from './person-view.ts';
import { searchPartners } from './receita-partners.ts';
import type { PeopleSource } from './people-source.ts';

export type PeopleSourceId = (typeof PEOPLE_SOURCES)[number];

/**
 * People stored for `workspaceId` (null: the demo set) matching every filter, in id order: the
 * position is the last id given (a keyset over a unique key, so pages neither repeat nor skip).
 */
const stored =
  (source: PeopleSourceId, workspace: (ctxWorkspace: string) => string | null): PeopleSource =>
  async ({ filters, limit, workspaceId, people, position }) => {
    const after = typeof position === 'string' ? [{ _id: { $gt: position } }] : [];
    const filter: Filter<PersonDoc> = { $and: [{ workspaceId: workspace(workspaceId) }, ...listQuery(filters), ...after] };
    // One more than asked says whether anything follows.
    const docs = await people.find(filter, limit + 1);
    const given = docs.slice(0, limit);
    return {
      rows: given.map((doc) => listPersonView(doc, source)),
      after: given.map((doc) => doc._id),
      end: docs.length > limit ? given[given.length - 1]!._id : null,
    };
  };

export const PEOPLE_SOURCE_SEARCH: Record<PeopleSourceId, PeopleSource> = {
  lists: stored('lists', (ws) => ws),
  receita_federal: ({ filters, limit, companies, signal, position }) => searchPartners(companies, filters, limit, signal, position),
  demo: stored('demo', () => null),
  apollo: searchApolloPeople,
};

/** The sources of a request: `sourceOrder` without repeats, or every source, Apollo only when it can be called. */
export function sourcesOf(order: readonly PeopleSourceId[] | undefined, apolloAvailable: boolean): PeopleSourceId[] {
  if (order && order.length > 0) return [...new Set(order)];
  return PEOPLE_SOURCES.filter((s) => s !== 'apollo' || apolloAvailable);
}
