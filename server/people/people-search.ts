/**
 * The people search over its sources, shared by the plain and the streamed operation. Every
 * source is asked at once for up to `limit` rows; rows of the same person are merged. The plain
 * search assembles them in `sourceOrder`; the stream sends each source's new rows as it finishes.
 */
import type { Logger } from 'pino';
import type { InputOf } from '../../shared/operations/index.ts';
import { identityKeys, PeopleMerge, type PersonView } from './person-view.ts';
import { PEOPLE_SOURCE_SEARCH, sourcesOf, type PeopleSourceId } from './sources.ts';
import { SourceUnable, type PeopleSearchDeps } from './people-source.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export const DEFAULT_PEOPLE_LIMIT = 10;

export interface SourceAnswer {
  source: PeopleSourceId;
  rows: PersonView[];
  /** Where the source stands after each row, and after all of them (null: nothing follows). */
  after: unknown[];
  end: unknown;
  error?: string;
}

/**
 * Where a paged people search stands: each source's own position (null once it has nothing
 * more), and the identities of the people already given, so that a later page never repeats
 * one that another source gives again.
 */
export interface PeoplePosition {
  sources: Partial<Record<PeopleSourceId, unknown>>;
  seen: string[];
}

export interface PeopleSearchRun {
  sources: PeopleSourceId[];
  limit: number;
  /** Each source's answer as it arrives. */
  answers: AsyncGenerator<SourceAnswer>;
  /** Cancels the sources still working (the rows needed are in, or the client left). */
  cancel(): void;
}

export function startPeopleSearch(
  input: InputOf<'searchPeople'> | InputOf<'streamPeople'>,
  { log, signal: callerSignal, trace, ...deps }: PeopleSearchDeps & { log: Logger; signal: AbortSignal; trace?: TraceContext },
  page: { position?: PeoplePosition | undefined; room?: number } = {},
): PeopleSearchRun {
  const { limit: asked = DEFAULT_PEOPLE_LIMIT, sourceOrder, ...rest } = input;
  const { cursor: _cursor, ...filters } = rest as typeof rest & { cursor?: unknown };
  const limit = Math.min(asked, page.room ?? Infinity);
  const sources = sourcesOf(sourceOrder, deps.slots.has('apollo'));
  const local = new AbortController();
  const signal = AbortSignal.any([callerSignal, local.signal]);

  const ask = async (source: PeopleSourceId): Promise<SourceAnswer> => {
    const empty = { source, rows: [], after: [], end: null };
    const positions = page.position?.sources;
    // A source that had nothing more on an earlier page is not asked again.
    if (positions && positions[source] === null) return empty;
    try {
      const found = await PEOPLE_SOURCE_SEARCH[source]({ ...deps, filters, limit, signal, trace, position: positions?.[source] });
      return { source, ...found };
    } catch (err) {
      if (err instanceof SourceUnable) return { ...empty, error: err.message };
      if (signal.aborted) return { ...empty, error: 'cancelled' };
      log.error({ err, source }, 'people source failed');
      return { ...empty, error: 'this source failed; the others answered' };
    }
  };
  const pending = new Map(sources.map((source) => [source, ask(source)]));

  async function* answers(): AsyncGenerator<SourceAnswer> {
    try {
      while (pending.size > 0) {
        const answer = await Promise.race(pending.values());
        pending.delete(answer.source);
        yield answer;
      }
    } finally {
      local.abort();
    }
  }
  return { sources, limit, answers: answers(), cancel: () => local.abort() };
}

/**
 * Rows per source in the order given, merged, at most `limit`, leaving out people an earlier page
 * gave (`position.seen`); what each source added; and where the next page starts (null when no
 * source has more).
 */
export function assemble(answers: SourceAnswer[], order: PeopleSourceId[], limit: number, position?: PeoplePosition) {
  const merge = new PeopleMerge();
  const seen = new Set(position?.seen ?? []);
  const pageKeys = new Set<string>();
  const counts = new Map<string, number>();
  const next: PeoplePosition = { sources: {}, seen: [] };
  for (const source of order) {
    const answer = answers.find((a) => a.source === source)!;
    let added = 0;
    let given = 0;
    for (const row of answer.rows) {
      const keys = identityKeys(row);
      const repeated = keys.some((k) => seen.has(k));
      if (!repeated) {
        if (merge.rows.length === limit && !keys.some((k) => pageKeys.has(k))) break;
        keys.forEach((k) => pageKeys.add(k));
        if (merge.add(row)) added++;
      }
      given++;
    }
    counts.set(source, added);
    const start = position?.sources[source];
    const at = given === answer.rows.length ? answer.end : given === 0 ? start : answer.after[given - 1];
    // Left out (not null), a source starts from its beginning: it gave nothing yet.
    if (at !== undefined) next.sources[source] = at;
  }
  for (const row of merge.rows) identityKeys(row).forEach((k) => seen.add(k));
  next.seen = [...seen];
  const more = Object.values(next.sources).some((p) => p !== null);
  return {
    results: merge.rows,
    next: more ? next : null,
    sources: order.map((source) => {
      const answer = answers.find((a) => a.source === source)!;
      return { source, count: counts.get(source) ?? 0, ...(answer.error ? { error: answer.error } : {}) };
    }),
  };
}
