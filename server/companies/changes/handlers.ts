/**
 * The changes feed (`searchCompanyChanges`): the changes imports recorded (change-history.ts), by
 * CNPJs, kinds and company search filters (applied to the establishment as in the release in
 * service), newest release first, a page at a time, 1 credit per change returned.
 */
import type { ChangeKind } from '../../../shared/change-kinds.ts';
import { checkAll, invalidRequest } from '../../lib/errors.ts';
import type { Handler } from '../../invocation/handler.ts';
import type { SearchCursors } from '../search-cursors.ts';
import type { Companies } from '../companies.ts';
import { planSearch, type CompanyFilters } from '../search-plan.ts';
import type { ChangeHistory, ChangePosition, ComparisonDoc } from './change-history.ts';
import { validCnpjs } from './cnpj-list.ts';

export interface ChangeDeps {
  history: ChangeHistory;
  companies: Pick<Companies, 'activities' | 'releases'>;
  searchCursors: SearchCursors;
}

/** The releases whose changes a `since` asks for, and the pair the answer names. */
export function releasesSince(comparisons: ComparisonDoc[], latest: string | null, since: string | undefined) {
  if (since !== undefined) {
    const imported = new Set<string>(comparisons.flatMap((c) => [c._id, c.previousRelease]));
    if (latest) imported.add(latest);
    if (!imported.has(since)) {
      const named = [...imported].sort().reverse();
      throw invalidRequest(
        `since ${JSON.stringify(since)} is not an imported release; ${named.length > 0 ? `the imported releases are ${named.join(', ')}` : 'no release is imported yet'}`,
      );
    }
    return { releases: comparisons.filter((c) => c._id > since).map((c) => c._id), from: since };
  }
  const last = comparisons.find((c) => c._id === latest);
  return { releases: last ? [last._id] : [], from: last?.previousRelease ?? null };
}

/**
 * Where the next page of the feed starts, and the releases the first page read: a release imported
 * between two pages would otherwise change what "the latest" means under the cursor, and the pages
 * after it would read another release from a position in the first (silently ending the listing).
 */
interface FeedPosition {
  after: ChangePosition;
  releases: string[];
  from: string | null;
  to: string | null;
}

export function createChangeHandlers({ history, companies, searchCursors }: ChangeDeps) {
  /** The releases a first page reads (`since`, or the latest), and the pair its answer names. */
  async function resolve(since: string | undefined): Promise<Omit<FeedPosition, 'after'>> {
    const [comparisons, loaded] = await Promise.all([history.comparisons(), companies.releases.loaded()]);
    const latest = loaded?.release ?? null;
    return { ...releasesSince(comparisons, latest, since), to: latest };
  }

  const searchCompanyChanges: Handler<'searchCompanyChanges'> = async (input, ctx) => {
    const { cnpjs, since, kinds, limit = 100, cursor: _cursor, ...filters } = input;
    const [wanted, filter, current] = await checkAll(
      () => (cnpjs ? validCnpjs(cnpjs) : undefined),
      async () => (Object.keys(filters).length > 0 ? planSearch(filters as CompanyFilters, await companies.activities()).filter : null),
      () => resolve(since),
    );
    const start = await searchCursors.start<FeedPosition | ChangePosition>(ctx.workspaceId, 'searchCompanyChanges', input);
    // A cursor stored before pages kept their releases holds the position alone (for the 2 hours a
    // cursor lives after an upgrade): it reads the releases as they are now, as that version did.
    const position = start.position && ('after' in start.position ? start.position : { ...current, after: start.position });
    const { releases, from, to } = position ?? current;
    const page = await history.page(
      { releases, limit, ...(kinds ? { kinds: kinds as ChangeKind[] } : {}), ...(wanted ? { cnpjs: wanted } : {}), ...(position ? { after: position.after } : {}) },
      filter,
    );
    await ctx.charge(page.changes.length, `${page.changes.length} registry changes`);
    // Not capped at a search's 1,000 rows: a month of changes of 5,000 customers may hold more.
    const more: FeedPosition | null = page.more && { after: page.more, releases, from, to };
    const nextCursor = await searchCursors.next(ctx.workspaceId, 'searchCompanyChanges', input, 0, more);
    return { changes: page.changes, nextCursor, releases: { from, to }, creditsCharged: ctx.creditsCharged };
  };
  return { searchCompanyChanges };
}
