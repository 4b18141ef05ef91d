/**
 * The people search over its sources, shared by the plain and the streamed operation. Every
 * source is asked at once for up to `limit` rows; rows of the same person are merged. The plain
 * search assembles them in `sourceOrder`; the stream sends each source's new rows as it finishes.
 */
import type { Logger } from 'pino';
import type { InputOf } from '../../shared/operations/index.ts';
import { PeopleMerge, type PersonView } from './person-view.ts';
import { PEOPLE_SOURCE_SEARCH, sourcesOf, type PeopleSourceId } from './sources.ts';
import { SourceUnable, type PeopleSearchDeps } from './source.ts';
import type { TraceContext } from '../trace-context.ts';

export const DEFAULT_PEOPLE_LIMIT = 10;

export interface SourceAnswer {
  source: PeopleSourceId;
  rows: PersonView[];
  error?: string;
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
): PeopleSearchRun {
  const { limit = DEFAULT_PEOPLE_LIMIT, sourceOrder, ...filters } = input;
  const sources = sourcesOf(sourceOrder, deps.slots.has('apollo'));
  const local = new AbortController();
  const signal = AbortSignal.any([callerSignal, local.signal]);

  const ask = async (source: PeopleSourceId): Promise<SourceAnswer> => {
    try {
      return { source, rows: await PEOPLE_SOURCE_SEARCH[source]({ ...deps, filters, limit, signal, trace }) };
    } catch (err) {
      if (err instanceof SourceUnable) return { source, rows: [], error: err.message };
      if (signal.aborted) return { source, rows: [], error: 'cancelled' };
      log.error({ err, source }, 'people source failed');
      return { source, rows: [], error: 'this source failed; the others answered' };
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

/** Rows per source in the order given, merged, at most `limit`; and what each source added. */
export function assemble(answers: SourceAnswer[], order: PeopleSourceId[], limit: number) {
  const merge = new PeopleMerge();
  const counts = new Map<string, number>();
  for (const source of order) {
    const answer = answers.find((a) => a.source === source)!;
    let added = 0;
    for (const row of answer.rows) {
      if (merge.rows.length === limit) break;
      if (merge.add(row)) added++;
    }
    counts.set(source, added);
  }
  return {
    results: merge.rows,
    sources: order.map((source) => {
      const answer = answers.find((a) => a.source === source)!;
      return { source, count: counts.get(source) ?? 0, ...(answer.error ? { error: answer.error } : {}) };
    }),
  };
}
