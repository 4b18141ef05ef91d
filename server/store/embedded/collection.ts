/**
 * The storage port over one SQLite table. better-sqlite3 is synchronous, so each write is one
 * immediate transaction run to its end before the call returns: a conditional update reads,
 * decides and writes with no other write between (in this process, which runs one at a time, or
 * another, which SQLite's write lock keeps out), and it is committed before it is acknowledged.
 */
import { Aggregator, ProcessingMode } from 'mingo';
import type { IndexSpecification, OptionalUnlessRequiredId } from 'mongodb';
import type {
  AnyBulkWriteOperation,
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
import { encode, type Doc } from './codec.ts';
import { compilePredicate } from './predicate.ts';
import { arrange, ArrayCursor, project, sortSpec } from './query.ts';
import { indexSpec } from './schema.ts';
import type { Tables } from './tables.ts';
import { inserted, replaced, updated, upserted } from './update.ts';

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

/**
 * Runs `change` as one write transaction (named `label` in its errors); a throw undoes all of it.
 * The caller resumes after pending I/O has had its turn, as it would after a disk write: a loop of
 * writes (a job runner working through thousands of items) would otherwise hold the event loop,
 * since nothing here waits for anything, and requests would wait until it ends.
 */
export async function written<R>(tables: Tables, label: string, change: () => R): Promise<R> {
  const result = tables.transaction(label, change);
  await new Promise((resolve) => setImmediate(resolve));
  return result;
}

type UpdateCounts = Omit<UpdateResultLike, 'upsertedId'> & { upsertedId: string | null };

const NO_UPDATE: UpdateCounts = { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };

/**
 * A collection of the embedded store. Its documents are the codec's `Doc`s: the store's
 * `collection<T>()` is the one place they are given the caller's record type, which no store can check.
 */
export class EmbeddedCollection implements Collection<Doc> {
  constructor(
    readonly collectionName: string,
    private readonly tables: Tables,
  ) {}

  private write<R>(change: () => R): Promise<R> {
    return written(this.tables, this.collectionName, change);
  }

  /** Matching stored documents, in `_id` order when `order` is given; stop reading to stop the query. */
  private matching(filter: Document, order?: 1 | -1): Generator<Doc> {
    return tested(filter, this.tables.candidates(this.collectionName, filter, order));
  }

  private first(filter: Document, sort: FindOptions['sort']): Doc | undefined {
    if (sort === undefined) return take(this.matching(filter), 1)[0];
    return arrange([...this.matching(filter)], { sort, limit: 1 })[0];
  }

  insertOne(doc: OptionalUnlessRequiredId<Doc>): Promise<{ insertedId: unknown }> {
    return this.write(() => ({ insertedId: this.insertNow(doc) }));
  }

  /** `insertOne` inside the caller's transaction (its own, a bulk write's or the store's `atomically`); answers the `_id`. */
  insertNow(doc: OptionalUnlessRequiredId<Doc>): unknown {
    const copy = inserted(doc as Document);
    // The driver also writes a generated _id back into the caller's document.
    (doc as Document)._id ??= copy._id;
    this.tables.insert(this.collectionName, copy);
    return copy._id;
  }

  async findOne(filter: Filter<Doc>, options: FindOptions = {}): Promise<WithId<Doc> | null> {
    const [doc] = await this.find(filter, { ...options, limit: 1 }).toArray();
    return doc ?? null;
  }

  find(filter: Filter<Doc>, options: FindOptions = {}): Cursor<WithId<Doc>> {
    return new ArrayCursor(() => {
      const order = idOrder(options.sort);
      // Matches in the order asked (by `_id`, or through an order table), or none asked: only the first skip + limit are needed.
      const ordered = order ? undefined : this.ordered(filter as Document, options.sort === undefined ? undefined : sortSpec(options.sort));
      const inOrder = options.sort === undefined || order !== undefined || ordered !== undefined;
      const enough = inOrder && options.limit ? (options.skip ?? 0) + Math.abs(options.limit) : Infinity;
      const docs = take(ordered ?? this.matching(filter as Document, order), enough);
      const arranged = arrange(docs, inOrder ? { skip: options.skip, limit: options.limit } : options);
      return project(arranged, options.projection);
    });
  }

  /** Matching stored documents in the order `sort` asks (`_id` order without one), when an order table gives them (Tables#ordered). */
  private ordered(filter: Document, sort: Record<string, 1 | -1> | undefined): Generator<Doc> | undefined {
    const candidates = this.tables.ordered(this.collectionName, filter, sort);
    return candidates && tested(filter, candidates);
  }

  updateOne(filter: Filter<Doc>, update: UpdateFilter<Doc>, options: UpdateOptions = {}): Promise<UpdateResultLike> {
    return this.write(() => this.updateIn(filter as Document, update as Document, options.upsert, false));
  }

  updateMany(filter: Filter<Doc>, update: UpdateFilter<Doc>, options: UpdateOptions = {}): Promise<UpdateResultLike> {
    return this.write(() => this.updateIn(filter as Document, update as Document, options.upsert, true));
  }

  private updateIn(filter: Document, update: Document, upsert: boolean | undefined, many: boolean, arrayFilters?: Document[]): UpdateCounts {
    const targets = take(this.matching(filter), many ? Infinity : 1);
    if (targets.length === 0) {
      if (!upsert) return NO_UPDATE;
      const doc = upserted(filter, update, arrayFilters);
      this.tables.insert(this.collectionName, doc);
      return { ...NO_UPDATE, upsertedCount: 1, upsertedId: doc._id };
    }
    let modifiedCount = 0;
    for (const target of targets) {
      const next = updated(target, update, filter, arrayFilters);
      if (next) {
        this.tables.replace(this.collectionName, target, next);
        modifiedCount++;
      }
    }
    return { ...NO_UPDATE, matchedCount: targets.length, modifiedCount };
  }

  findOneAndUpdate(filter: Filter<Doc>, update: UpdateFilter<Doc>, options: FindOneAndUpdateOptions): Promise<WithId<Doc> | null> {
    return this.write(() => this.findOneAndUpdateNow(filter, update, options));
  }

  /** `findOneAndUpdate` inside the caller's transaction (its own, or the store's `atomically`). */
  findOneAndUpdateNow(filter: Filter<Doc>, update: UpdateFilter<Doc>, options: FindOneAndUpdateOptions): WithId<Doc> | null {
    const before = this.first(filter as Document, options.sort);
    let after: Doc;
    if (before) {
      const next = updated(before, update as Document, filter as Document);
      if (next) this.tables.replace(this.collectionName, before, next);
      after = next ?? before;
    } else if (options.upsert) {
      after = upserted(filter as Document, update as Document);
      this.tables.insert(this.collectionName, after);
    } else {
      return null;
    }
    // MongoDB returns the document as it was unless asked otherwise.
    const chosen = options.returnDocument === 'after' ? after : before;
    return chosen ? (project([chosen], options.projection)[0] ?? null) : null;
  }

  deleteOne(filter: Filter<Doc>): Promise<{ deletedCount: number }> {
    return this.write(() => {
      const target = this.first(filter as Document, undefined);
      if (target) this.tables.remove(this.collectionName, target);
      return { deletedCount: target ? 1 : 0 };
    });
  }

  deleteMany(filter: Filter<Doc>): Promise<{ deletedCount: number }> {
    return this.write(() => {
      const targets = [...this.matching(filter as Document)];
      for (const target of targets) this.tables.remove(this.collectionName, target);
      return { deletedCount: targets.length };
    });
  }

  async countDocuments(filter: Filter<Doc> = {}): Promise<number> {
    if (Object.keys(filter).length === 0) return this.tables.count(this.collectionName);
    let count = 0;
    for (const _ of this.matching(filter as Document)) count++;
    return count;
  }

  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R> {
    return new ArrayCursor(() => {
      for (const stage of pipeline) {
        if ('$out' in stage || '$merge' in stage) throw new Error('The embedded store does not support $out or $merge');
      }
      // A leading $match can use the indexes; the rest of the pipeline runs in mingo.
      const [head, ...rest] = pipeline;
      const leadingMatch = head && Object.keys(head).length === 1 && '$match' in head;
      const source = [...this.matching(leadingMatch ? (head.$match as Document) : {})];
      const stages = leadingMatch ? rest : pipeline;
      if (stages.length === 1) {
        const counted = countGroups(stages[0]!, source);
        if (counted) return counted as R[];
      }
      // Every input was parsed for this run alone, so mingo may use them as they are.
      const aggregator = new Aggregator(stages, {
        processingMode: ProcessingMode.CLONE_OFF,
        collectionResolver: (name) => [...this.tables.candidates(name, {})],
      });
      return aggregator.run<R>(source);
    });
  }

  async bulkWrite(operations: AnyBulkWriteOperation<Doc>[], options: { ordered?: boolean } = {}): Promise<BulkWriteResultLike> {
    const ordered = options.ordered ?? true;
    const result: BulkWriteResultLike = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
    const writeErrors: BulkWriteError['writeErrors'] = [];
    await this.write(() => {
      for (const [index, operation] of operations.entries()) {
        const before = { ...result };
        try {
          // A savepoint: one operation fails whole; those before it stay applied, as in MongoDB.
          this.tables.nested(() => this.applyBulk(operation as Document, result));
        } catch (err) {
          Object.assign(result, before);
          writeErrors.push({ index, code: (err as { code?: unknown }).code, errmsg: (err as Error).message });
          if (ordered) break;
        }
      }
    });
    if (writeErrors.length > 0) throw new BulkWriteError(writeErrors, result);
    return result;
  }

  private applyBulk(operation: Document, result: BulkWriteResultLike): void {
    const [kind, spec] = Object.entries(operation)[0] ?? [];
    const op = spec as Document;
    switch (kind) {
      case 'insertOne':
        this.insertNow(op.document as OptionalUnlessRequiredId<Doc>);
        result.insertedCount++;
        return;
      case 'updateOne':
      case 'updateMany': {
        const counts = this.updateIn(op.filter, op.update, op.upsert, kind === 'updateMany', op.arrayFilters);
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
          if (changed) this.tables.replace(this.collectionName, target, next);
          result.matchedCount++;
          result.modifiedCount += changed ? 1 : 0;
        } else {
          this.tables.insert(this.collectionName, next);
          result.upsertedCount++;
        }
        return;
      }
      case 'deleteOne':
      case 'deleteMany': {
        for (const target of take(this.matching(op.filter), kind === 'deleteOne' ? 1 : Infinity)) {
          this.tables.remove(this.collectionName, target);
          result.deletedCount++;
        }
        return;
      }
      default:
        throw new Error(`Unsupported bulkWrite operation: ${String(kind)}`);
    }
  }

  async createIndex(keys: IndexSpecification, options: IndexOptions = {}): Promise<string> {
    const spec = indexSpec(keys, options);
    return this.write(() => this.tables.createIndex(this.collectionName, spec));
  }

  /** Deletes the documents a TTL index says have expired; returns how many. */
  removeExpired(now: Date): Promise<number> {
    return this.write(() => {
      const expired = this.tables.expired(this.collectionName, now.getTime());
      for (const doc of expired) this.tables.remove(this.collectionName, doc);
      return expired.length;
    });
  }
}

/** The direction of a sort on `_id` alone, which SQL gives by reading in key order. */
function idOrder(sort: FindOptions['sort']): 1 | -1 | undefined {
  if (sort === undefined) return undefined;
  const spec = Object.entries(sortSpec(sort));
  return spec.length === 1 && spec[0]![0] === '_id' ? spec[0]![1] : undefined;
}

/** The candidates `filter` matches (SQL found a superset of them); leaving early closes their query. */
function* tested(filter: Document, candidates: Iterable<Doc>): Generator<Doc> {
  const test = compilePredicate(filter);
  for (const doc of candidates) if (test(doc)) yield doc;
}

/** The first `count` items (all of them for Infinity); a generator left early closes its query. */
function take<T>(items: Iterable<T>, count: number): T[] {
  const taken: T[] = [];
  if (count <= 0) return taken;
  for (const item of items) {
    taken.push(item);
    if (taken.length >= count) break;
  }
  return taken;
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

