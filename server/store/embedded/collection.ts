/**
 * The storage port over one table. Every write runs to completion synchronously (evaluate,
 * check constraints, apply to memory, queue its journal line) before the first await, so a
 * conditional update cannot interleave with another write: Node runs one at a time. The promise
 * then waits for the journal line to reach the disk.
 */
import { Aggregator, ProcessingMode } from 'mingo';
import type {
  AnyBulkWriteOperation,
  BaseDoc,
  BulkWriteResultLike,
  Collection,
  Cursor,
  Document,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexOptions,
  UpdateFilter,
  UpdateOptions,
  UpdateResultLike,
  WithId,
} from '../port.ts';
import type { IndexSpecification, OptionalUnlessRequiredId } from 'mongodb';
import { cloneValue, encode, type Doc } from './codec.ts';
import { indexSpec } from './indexes.ts';
import { Mutation, type JournalEntry } from './mutation.ts';
import { arrange, ArrayCursor, matching, project } from './query.ts';
import type { Table } from './table.ts';
import { inserted, replaced, updated, upserted } from './update.ts';

/** What a collection needs from its store to make writes durable. */
export interface Committer {
  /** Throws when the store accepts no writes (closed, or its journal failed). */
  assertWritable(): void;
  commit(entry: JournalEntry): Promise<void>;
  /** Every table, for `$lookup` and friends. */
  table(name: string): Table;
  /** Whether non-unique indexes wait for the first query that can use them (see Table#createIndex). */
  readonly deferIndexes: boolean;
}

export class BulkWriteError extends Error {
  readonly code: unknown;

  constructor(
    readonly writeErrors: Array<{ index: number; code: unknown; errmsg: string }>,
    readonly result: BulkWriteResultLike,
  ) {
    const first = writeErrors[0]!;
    super(first.errmsg);
    this.code = first.code;
  }
}

type UpdateCounts = Omit<UpdateResultLike, 'upsertedId'> & { upsertedId: string | null };

const NO_UPDATE: UpdateCounts = { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };

export class EmbeddedCollection<T extends BaseDoc> implements Collection<T> {
  constructor(
    private readonly table: Table,
    private readonly store: Committer,
  ) {}

  get collectionName(): string {
    return this.table.name;
  }

  /** Applies `change` to memory, undoing it all if it throws, then waits until it is durable. */
  private async write<R>(change: (mutation: Mutation) => R): Promise<R> {
    this.store.assertWritable();
    const mutation = new Mutation(this.table);
    let result: R;
    try {
      result = change(mutation);
    } catch (err) {
      mutation.rollback();
      throw err;
    }
    const entry = mutation.journalEntry();
    if (entry) await this.store.commit(entry);
    return result;
  }

  /** The first matching stored document in `sort` order (or natural order). */
  private first(filter: Document, sort: FindOptions['sort']): Doc | undefined {
    const docs = sort === undefined ? [...take(matching(this.table, filter), 1)] : [...matching(this.table, filter)];
    return arrange(docs, { sort, limit: 1 })[0];
  }

  async insertOne(doc: OptionalUnlessRequiredId<T>): Promise<{ insertedId: unknown }> {
    const copy = inserted(doc as Document);
    // The driver also writes a generated _id back into the caller's document.
    (doc as Document)._id ??= copy._id;
    return this.write((mutation) => {
      mutation.insert(copy);
      return { insertedId: copy._id };
    });
  }

  async findOne(filter: Filter<T>, options: FindOptions = {}): Promise<WithId<T> | null> {
    // Most reads name one document by its id: straight to the table, without compiling a filter,
    // planning, or the cursor's generators (about 6 % of bench:http's busy time, issue 35).
    const id = soleId(filter as Document);
    if (id !== undefined && !options.skip) {
      const stored = this.table.get(id);
      return stored ? (project([stored], options.projection)[0] as unknown as WithId<T>) : null;
    }
    const [doc] = await this.find(filter, { ...options, limit: 1 }).toArray();
    return doc ?? null;
  }

  find(filter: Filter<T>, options: FindOptions = {}): Cursor<WithId<T>> {
    return new ArrayCursor(() => {
      const found = matching(this.table, filter as Document, options);
      // Without a sort, only the first skip + limit matches are needed.
      const enough = options.sort === undefined && options.limit ? (options.skip ?? 0) + Math.abs(options.limit) : Infinity;
      const docs = arrange([...take(found, enough)], options);
      return project(docs, options.projection) as unknown as WithId<T>[];
    });
  }

  updateOne(filter: Filter<T>, update: UpdateFilter<T>, options: UpdateOptions = {}): Promise<UpdateResultLike> {
    return this.write((mutation) => this.updateIn(mutation, filter as Document, update as Document, options.upsert, false));
  }

  updateMany(filter: Filter<T>, update: UpdateFilter<T>, options: UpdateOptions = {}): Promise<UpdateResultLike> {
    return this.write((mutation) => this.updateIn(mutation, filter as Document, update as Document, options.upsert, true));
  }

  private updateIn(
    mutation: Mutation,
    filter: Document,
    update: Document,
    upsert: boolean | undefined,
    many: boolean,
    arrayFilters?: Document[],
  ): UpdateCounts {
    const targets = many ? [...matching(this.table, filter)] : [...take(matching(this.table, filter), 1)];
    if (targets.length === 0) {
      if (!upsert) return NO_UPDATE;
      const doc = upserted(filter, update, arrayFilters);
      mutation.insert(doc);
      return { ...NO_UPDATE, upsertedCount: 1, upsertedId: doc._id };
    }
    let modifiedCount = 0;
    for (const target of targets) {
      const next = updated(target, update, filter, arrayFilters);
      if (next) {
        mutation.put(next);
        modifiedCount++;
      }
    }
    return { ...NO_UPDATE, matchedCount: targets.length, modifiedCount };
  }

  findOneAndUpdate(filter: Filter<T>, update: UpdateFilter<T>, options: FindOneAndUpdateOptions): Promise<WithId<T> | null> {
    return this.write((mutation) => {
      const before = this.first(filter as Document, options.sort);
      let after: Doc;
      if (before) {
        const next = updated(before, update as Document, filter as Document);
        if (next) mutation.put(next);
        after = next ?? before;
      } else if (options.upsert) {
        after = upserted(filter as Document, update as Document);
        mutation.insert(after);
      } else {
        return null;
      }
      // MongoDB returns the document as it was unless asked otherwise.
      const chosen = options.returnDocument === 'after' ? after : before;
      return chosen ? (project([chosen], options.projection)[0] as unknown as WithId<T>) : null;
    });
  }

  deleteOne(filter: Filter<T>): Promise<{ deletedCount: number }> {
    return this.write((mutation) => {
      const target = this.first(filter as Document, undefined);
      if (target) mutation.remove(target._id);
      return { deletedCount: target ? 1 : 0 };
    });
  }

  deleteMany(filter: Filter<T>): Promise<{ deletedCount: number }> {
    return this.write((mutation) => {
      const targets = [...matching(this.table, filter as Document)];
      for (const target of targets) mutation.remove(target._id);
      return { deletedCount: targets.length };
    });
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    if (Object.keys(filter).length === 0) return this.table.size;
    let count = 0;
    for (const _ of matching(this.table, filter as Document)) count++;
    return count;
  }

  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R> {
    return new ArrayCursor(() => {
      for (const stage of pipeline) {
        if ('$out' in stage || '$merge' in stage) throw new Error('The embedded store does not support $out or $merge');
      }
      // A leading $match can use the indexes; the rest of the pipeline runs in mingo on copies.
      const [head, ...rest] = pipeline;
      const leadingMatch = head && Object.keys(head).length === 1 && '$match' in head;
      const source = leadingMatch ? [...matching(this.table, head.$match as Document)] : [...this.table.all()];
      const stages = leadingMatch ? rest : pipeline;
      if (stages.length === 1) {
        const counted = countGroups(stages[0]!, source);
        if (counted) return counted as R[];
      }
      // A pipeline that starts by grouping or counting only reads the stored documents: it can
      // run on them directly (no copy of every input) as long as its few outputs are copied.
      const readOnly = stages[0] !== undefined && ('$group' in stages[0] || '$count' in stages[0]);
      const aggregator = new Aggregator(stages, {
        processingMode: readOnly ? ProcessingMode.CLONE_OFF : ProcessingMode.CLONE_INPUT,
        collectionResolver: (name) => [...this.store.table(name).all()].map(cloneValue),
      });
      const results = aggregator.run<R>(source);
      return readOnly ? results.map((doc) => cloneValue(doc) as R) : results;
    });
  }

  bulkWrite(operations: AnyBulkWriteOperation<T>[], options: { ordered?: boolean } = {}): Promise<BulkWriteResultLike> {
    const ordered = options.ordered ?? true;
    const result: BulkWriteResultLike = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
    const writeErrors: BulkWriteError['writeErrors'] = [];
    const done = this.write((mutation) => {
      for (const [index, operation] of operations.entries()) {
        const savepoint = mutation.savepoint();
        try {
          this.applyBulk(mutation, operation as Document, result);
        } catch (err) {
          // One operation fails whole; those before it stay applied, as in MongoDB.
          mutation.rollback(savepoint);
          writeErrors.push({ index, code: (err as { code?: unknown }).code, errmsg: (err as Error).message });
          if (ordered) break;
        }
      }
    });
    return done.then(() => {
      if (writeErrors.length > 0) throw new BulkWriteError(writeErrors, result);
      return result;
    });
  }

  private applyBulk(mutation: Mutation, operation: Document, result: BulkWriteResultLike): void {
    const [kind, spec] = Object.entries(operation)[0] ?? [];
    const op = spec as Document;
    switch (kind) {
      case 'insertOne': {
        const copy = inserted(op.document as Document);
        (op.document as Document)._id ??= copy._id;
        mutation.insert(copy);
        result.insertedCount++;
        return;
      }
      case 'updateOne':
      case 'updateMany': {
        const counts = this.updateIn(mutation, op.filter, op.update, op.upsert, kind === 'updateMany', op.arrayFilters);
        result.matchedCount += counts.matchedCount;
        result.modifiedCount += counts.modifiedCount;
        result.upsertedCount += counts.upsertedCount;
        return;
      }
      case 'replaceOne': {
        const target = this.first(op.filter, undefined);
        if (!target && !op.upsert) return;
        const next = replaced(op.replacement as Document, target?._id, op.filter);
        if (target) {
          const changed = encode(next) !== encode(target);
          if (changed) mutation.put(next);
          result.matchedCount++;
          result.modifiedCount += changed ? 1 : 0;
        } else {
          mutation.insert(next);
          result.upsertedCount++;
        }
        return;
      }
      case 'deleteOne':
      case 'deleteMany': {
        const found = matching(this.table, op.filter);
        for (const target of [...(kind === 'deleteOne' ? take(found, 1) : found)]) {
          mutation.remove(target._id);
          result.deletedCount++;
        }
        return;
      }
      default:
        throw new Error(`Unsupported bulkWrite operation: ${String(kind)}`);
    }
  }

  async createIndex(keys: IndexSpecification, options: IndexOptions = {}): Promise<string> {
    return this.table.createIndex(indexSpec(keys, options), this.store.deferIndexes);
  }

  /** Deletes documents whose TTL index says they have expired; returns how many. */
  removeExpired(now: Date): Promise<number> {
    return this.write((mutation) => {
      const ids = this.table.expired(now.getTime());
      for (const id of ids) mutation.remove(id);
      return ids.length;
    });
  }
}

/** The id a filter names when it is exactly `{ _id: "…" }` (stored ids are always strings). */
function soleId(filter: Document): string | undefined {
  let id: unknown;
  for (const key in filter) {
    if (key !== '_id' || id !== undefined) return undefined;
    id = filter[key];
  }
  return typeof id === 'string' ? id : undefined;
}

function* take<T>(items: Iterable<T>, count: number): Generator<T> {
  let taken = 0;
  for (const item of items) {
    yield item;
    if (++taken >= count) return;
  }
}

const isFieldRef = (v: unknown): v is string => typeof v === 'string' && /^\$[^$.]+$/.test(v);
const isCountOne = (v: unknown) => typeof v === 'object' && v !== null && Object.keys(v).length === 1 && (v as Document).$sum === 1;

/**
 * `{$group: {_id: '$a' or {k: '$a', …}, n: {$sum: 1}, …}}`, the shape of "how many per status",
 * counted with one Map instead of mingo's general grouping (which costs tens of milliseconds on
 * tens of thousands of documents). Undefined when the stage, or a document (a missing field, a
 * value that is not a scalar), needs the general path.
 */
function countGroups(stage: Document, docs: Doc[]): Document[] | undefined {
  const group = stage.$group as Document | undefined;
  if (!group || Object.keys(stage).length !== 1) return undefined;
  const { _id: id, ...counters } = group;
  if (!Object.values(counters).every(isCountOne)) return undefined;
  const fields = isFieldRef(id) ? null : typeof id === 'object' && id !== null && !Array.isArray(id) && Object.values(id).every(isFieldRef) ? (id as Record<string, string>) : undefined;
  if (fields === undefined) return undefined;
  const names = fields ? Object.keys(fields) : [];
  const paths = fields ? Object.values(fields).map((ref) => ref.slice(1)) : [(id as string).slice(1)];

  const groups = new Map<string, { values: unknown[]; n: number }>();
  for (const doc of docs) {
    const values = paths.map((path) => doc[path]);
    if (values.some((v) => v === undefined || (typeof v === 'object' && v !== null))) return undefined;
    const key = JSON.stringify(values);
    const entry = groups.get(key);
    if (entry) entry.n++;
    else groups.set(key, { values, n: 1 });
  }
  return [...groups.values()].map(({ values, n }) => ({
    _id: fields ? Object.fromEntries(names.map((name, i) => [name, values[i]])) : values[0],
    ...Object.fromEntries(Object.keys(counters).map((name) => [name, n])),
  }));
}
