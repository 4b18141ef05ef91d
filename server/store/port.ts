/**
 * The storage port: the narrow subset of the official `mongodb` driver's Collection API that
 * repositories may use, down to the operators and options (an allow-list: what the embedded
 * store, MongoDB and FerretDB 1.24 all honour; see docs/architecture.md, Storage). The MongoDB adapter passes calls straight to the driver; the embedded
 * store implements the same subset on SQLite (candidates by SQL, the filter by its own test and mingo). `check-driver.ts` proves at compile time that the
 * driver's own Collection type satisfies this interface, so repository code runs on both.
 *
 * Every document has a string `_id` (a UUID or a natural key) so both adapters agree on identity.
 */
import type {
  AlternativeType,
  AnyBulkWriteOperation,
  Document,
  FilterOperators,
  IndexSpecification,
  OptionalUnlessRequiredId,
  Sort,
  UpdateFilter as DriverUpdateFilter,
  WithId,
} from 'mongodb';

export type { AnyBulkWriteOperation, Document, Sort, WithId };

/**
 * The query operators a filter may use: what the embedded store, MongoDB and FerretDB 1.24 answer
 * alike (the conformance suite holds all three to it). Not: `$expr`, `$where`, `$text`, `$nor`,
 * geo or bitwise operators. `$ne`, `$nin` and `$not` over an array of documents
 * (`{'items.sku': {$ne: 's1'}}`) are typed but answered differently by FerretDB: do not rely on them.
 */
export type FilterOperator =
  | '$eq'
  | '$ne'
  | '$gt'
  | '$gte'
  | '$lt'
  | '$lte'
  | '$in'
  | '$nin'
  | '$exists'
  | '$all'
  | '$size'
  | '$regex'
  | '$options'
  | '$not'
  | '$elemMatch';

export type Condition<V> = AlternativeType<V> | Pick<FilterOperators<AlternativeType<V>>, FilterOperator>;

export type Filter<T> = { [P in keyof WithId<T>]?: Condition<WithId<T>[P]> } & {
  $and?: Filter<T>[];
  $or?: Filter<T>[];
  $nor?: never;
  $expr?: never;
  $where?: never;
  $text?: never;
  $jsonSchema?: never;
  /** A path into a field's documents (`'partners.name'`), or a field the record type does not name. */
  [path: string]: unknown;
};

/**
 * The update operators an update may use. Not `$rename`, `$mul`, `$pop`, `$pullAll`, `$bit`. Of
 * `$push`'s modifiers only `$each`: FerretDB ignores `$slice`, `$sort` and `$position` silently.
 * `$pull` by a condition on the elements works everywhere (on FerretDB the adapter applies it).
 */
export type UpdateOperator = '$set' | '$unset' | '$inc' | '$min' | '$max' | '$setOnInsert' | '$push' | '$pull' | '$addToSet' | '$currentDate';

export type UpdateFilter<T> = Pick<DriverUpdateFilter<T>, UpdateOperator>;

/**
 * The aggregation stages allowed. `$group`'s accumulators: `{ $sum: 1 }` (a count) only, since
 * FerretDB 1.24 answers 0 for `{ $sum: '$field' }` and lacks `$max`, `$min`, `$push`, `$avg`.
 */
export type PipelineStage =
  | { $match: Document }
  | { $group: { _id: unknown } & Record<string, unknown> }
  | { $sort: Record<string, 1 | -1> }
  | { $skip: number }
  | { $limit: number }
  | { $count: string };

export interface BaseDoc {
  _id: string;
}

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  projection?: Document;
}

export interface Cursor<T> {
  toArray(): Promise<T[]>;
  [Symbol.asyncIterator](): AsyncIterator<T>;
}

export interface UpdateOptions {
  upsert?: boolean;
}

export interface FindOneAndUpdateOptions {
  returnDocument?: 'before' | 'after';
  upsert?: boolean;
  sort?: Sort;
  projection?: Document;
}

/**
 * No sparse or partial indexes (FerretDB has neither). A unique index must not rely on how
 * documents lacking its field count: MongoDB files them all under null (so one at most), FerretDB
 * lets many lack it. A unique index's fields hold scalars: the embedded store compares an array
 * whole, and finds a document by equalities on all of them through that index.
 */
export interface IndexOptions {
  name?: string;
  unique?: boolean;
  /**
   * Documents are removed this many seconds after the indexed date field: a TTL index on
   * MongoDB, a sweep of the adapter's own on FerretDB and the embedded store. Removal comes some
   * time after expiry, so readers still check the date themselves.
   */
  expireAfterSeconds?: number;
}

export interface UpdateResultLike {
  matchedCount: number;
  modifiedCount: number;
  upsertedCount: number;
  upsertedId: unknown;
}

export interface BulkWriteResultLike {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
  upsertedCount: number;
}

export interface Collection<T extends BaseDoc> {
  readonly collectionName: string;
  insertOne(doc: OptionalUnlessRequiredId<T>): Promise<{ insertedId: unknown }>;
  findOne(filter: Filter<T>, options?: FindOptions): Promise<WithId<T> | null>;
  find(filter: Filter<T>, options?: FindOptions): Cursor<WithId<T>>;
  updateOne(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResultLike>;
  updateMany(filter: Filter<T>, update: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResultLike>;
  findOneAndUpdate(
    filter: Filter<T>,
    update: UpdateFilter<T>,
    options: FindOneAndUpdateOptions,
  ): Promise<WithId<T> | null>;
  deleteOne(filter: Filter<T>): Promise<{ deletedCount: number }>;
  deleteMany(filter: Filter<T>): Promise<{ deletedCount: number }>;
  countDocuments(filter?: Filter<T>): Promise<number>;
  aggregate<R extends Document = Document>(pipeline: PipelineStage[]): Cursor<R>;
  bulkWrite(operations: AnyBulkWriteOperation<T>[], options?: { ordered?: boolean }): Promise<BulkWriteResultLike>;
  createIndex(keys: IndexSpecification, options?: IndexOptions): Promise<string>;
}

/** An index that a repository needs; declared beside the repository, created at start-up. */
export interface IndexDeclaration {
  collection: string;
  keys: Record<string, 1 | -1>;
  options?: IndexOptions;
  /**
   * Only on this store: the embedded store scans a collection of a few thousand rows faster than
   * it keeps a bucket of that many rows under one key up to date on every write (job items).
   */
  onlyOn?: 'embedded' | 'mongodb';
}

/**
 * Documents as the embedded store encodes them for a bulk load (`encodeDocuments`): their ids,
 * their encodings joined by commas as UTF-8, and where each ends. `keys`, `fields`, `multi` and
 * `single` carried the journal store's index values and are now always empty (kept so the registry
 * import's worker protocol is unchanged; issue 41 replaces that path).
 */
export interface EncodedDocuments {
  ids: string[];
  bytes: Uint8Array;
  ends: number[];
  keys: string;
  fields: Record<string, [number, number]>;
  multi: string[];
  single: string[];
}

/**
 * Writes whole documents into a collection without the process keeping them: for a one-shot
 * command loading more documents than its memory should hold (a registry import). Once a load
 * starts, the collection is the loader's: nothing else in the process may read or write it.
 */
export interface BulkLoader<T extends BaseDoc> {
  /** The documents stored when the load began, by `_id`, each reduced to the fields asked for. */
  readonly stored: ReadonlyMap<string, Partial<T>>;
  /** The fields the collection is indexed by: `encodeDocuments` keeps their values beside the documents. */
  readonly indexed: string[];
  /**
   * Stores each document under its `_id`, replacing any stored version; resolves once durable.
   * Documents are taken one at a time, so a caller may build them as they are taken.
   */
  put(docs: Iterable<T>): Promise<void>;
  /**
   * The same for documents already encoded as the store encodes them (`encodeDocuments`): so a
   * worker thread can take the encoding off the writer's thread, and hand over bytes, not text.
   */
  putEncoded(encoded: EncodedDocuments): Promise<void>;
  /** Removes the documents with these ids, whether stored before the load or by it. */
  remove(ids: string[]): Promise<void>;
}

export interface Store {
  readonly kind: 'embedded' | 'mongodb';
  /**
   * The embedded store's directory: the registry keeps its release files under it (see
   * server/companies/registry/), beside the store rather than in it.
   */
  readonly dataDir?: string;
  collection<T extends BaseDoc>(name: string): Collection<T>;
  /**
   * Only where holding documents costs the process memory (the embedded store, opened for a
   * one-shot command); elsewhere a collection's bulkWrite already streams them away.
   */
  readonly bulkLoader?: <T extends BaseDoc>(collection: string, fields?: Array<keyof T & string>) => BulkLoader<T>;
  /**
   * The documents stored under `ids` (those found), keyed by `_id`, each as JSON in UTF-8: what
   * `JSON.stringify` writes of the document `find` gives, less the top-level fields `omit` names.
   * For an answer that passes many stored documents on unchanged (the CNPJ batch over HTTP): the
   * embedded store cuts them from the bytes it keeps rather than parsing them to be written again.
   * Only a binding that writes JSON itself may use it; MCP, the agent and idempotency get objects.
   */
  jsonByIds(collection: string, ids: readonly string[], omit: readonly string[]): Promise<Map<string, Buffer>>;
  /**
   * Where the store has transactions across collections (the embedded store's SQLite): runs
   * `work`, whose writes through `writes` commit together before this resolves (with what `work`
   * returned), or not at all if it throws. `work` is synchronous, so that nothing else writes in
   * between (work that awaits is refused). MongoDB (and FerretDB, which has no transactions)
   * leaves it out, and its callers keep a path of single-document writes.
   */
  atomically?<R>(work: (writes: AtomicWrites) => R): Promise<R>;
  /**
   * The embedded store only: a consistent copy of everything into one file, while it serves
   * (`npx prospecta backup`). MongoDB has its own tools (mongodump).
   */
  backup?(path: string): Promise<{ path: string; collections: number; documents: number; bytes: number }>;
  /** Releases the store (the database and the server's lock, connections). */
  close(): Promise<void>;
}

/** The writes `Store.atomically` offers: the collection's own calls, answered at once. */
export interface AtomicWrites {
  findOneAndUpdate<T extends BaseDoc>(collection: string, filter: Filter<T>, update: UpdateFilter<T>, options: FindOneAndUpdateOptions): WithId<T> | null;
  insertOne<T extends BaseDoc>(collection: string, doc: OptionalUnlessRequiredId<T>): void;
}

/** Error code MongoDB uses for a unique index violation; the embedded store throws the same. */
export const DUPLICATE_KEY = 11000;

export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === DUPLICATE_KEY;
}

/** The driver's errors for a server it cannot reach (gone, restarting, unreachable): not the request's fault. */
const UNREACHABLE = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
]);

/**
 * Whether a store call failed because the database server could not be reached. The driver
 * reconnects by itself once the server is back, so such a failure is worth a retry later
 * (503 `store_unavailable`), never a 500.
 */
export function isStoreUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (UNREACHABLE.has((e as Error).name)) return true;
  }
  return false;
}

/** The code of the error a store call meets once the store was closed (the embedded store's). */
export const STORE_CLOSED = 'STORE_CLOSED';

/**
 * Whether a store call failed because this process closed the store (shutting down): work no
 * caller waits for meets this at the end, and is redone from what is durable at the next start.
 */
export function isStoreClosed(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  return (err as { code?: unknown }).code === STORE_CLOSED || (err as Error).name === 'MongoTopologyClosedError';
}
