/**
 * The MongoDB adapter's answers to what FerretDB 1.24 (a MongoDB-wire server on SQLite or
 * PostgreSQL) does differently, so that repositories written against the port keep their meaning:
 *
 * - **Updates are not atomic.** FerretDB runs an update as a read, the change applied in Go, and
 *   a write of the whole document by `_id`, with nothing in between holding the row. Two
 *   concurrent `{balance: {$gte: 1}}` debits both pass and one `$inc` is lost. The one atomic
 *   thing it has is a unique insert, so each conditional write here takes a lock document
 *   (`_prospecta_locks`, `_id` = collection and document id) before it reads and changes the
 *   document, and removes it after; every instance on the same database honours the same locks.
 *   A lock left by a process that died lapses after `LEASE_MS`. Inside one process, writers of
 *   one document queue in memory first, so they do not all spin on the store.
 * - **TTL indexes are refused** (`expireAfterSeconds` "is not implemented yet"): the index is
 *   created without it and the adapter sweeps expired documents itself, as the embedded store does.
 * - **A unique index broken by an update** comes back as an InternalError naming the SQL
 *   constraint rather than code 11000; it is given MongoDB's code, so `isDuplicateKeyError` holds.
 * - **findAndModify refuses a projection**: the projection is applied to the returned document here.
 * - **`$pull` with a condition** (`{pending: {movementId}}`, `{scores: {$gte: 5}}`) silently
 *   changes nothing; only a pull of an equal value works. Under the document's lock, the adapter
 *   reads the array, drops the matching elements (mingo decides, as in the embedded store) and
 *   writes the rest with `$set`.
 *
 * `bulkWrite` is passed straight through: it is for loads one writer owns (imports, a sheet's
 * rows), not for documents others update concurrently.
 */
import { randomUUID } from 'node:crypto';
import { Query } from 'mingo';
import { setTimeout as delay } from 'node:timers/promises';
import type { Collection as DriverCollection, Db, Document, Filter as DriverFilter, UpdateFilter as DriverUpdate } from 'mongodb';
import { DUPLICATE_KEY, isDuplicateKeyError } from './port.ts';
import type {
  BaseDoc,
  BulkWriteResultLike,
  Collection,
  Filter,
  FindOneAndUpdateOptions,
  FindOptions,
  IndexOptions,
  PipelineStage,
  UpdateFilter,
  UpdateOptions,
  UpdateResultLike,
} from './port.ts';

const LOCKS = '_prospecta_locks';
/** Longer than any single write takes, short enough that a crashed holder blocks briefly. */
const LEASE_MS = 15_000;
const MAX_BACKOFF_MS = 20;
/**
 * The most updates one bulk command carries to FerretDB. Its update command keeps every
 * matched update's read open (and the backend connection under it) until the whole command ends,
 * and each update takes one more for its write: a command of more updates than its backend pool
 * holds (50 connections on PostgreSQL, 100 per SQLite database) waits for itself forever, and
 * FerretDB stops answering. Imports stalled so at a few thousand rows. With
 * {@link FERRETDB_MAX_POOL_SIZE} commands at once, (4 + 1) × 8 = 40 stays under 50.
 */
export const BULK_COMMAND_UPDATES = 4;
/** The driver's connections to FerretDB (each runs one command at a time), unless the URI says otherwise: see above. */
export const FERRETDB_MAX_POOL_SIZE = 8;

export interface FerretOptions {
  /** How often documents past a TTL index's expiry are removed. */
  ttlSweepIntervalMs: number;
  onBackgroundError: (err: Error) => void;
}

interface LockDoc {
  _id: string;
  token: string;
  expiresAt: Date;
}

interface Ttl {
  collection: string;
  field: string;
  seconds: number;
}

/** FerretDB's answer to an update that breaks a unique index, as MongoDB would have given it. */
function normalized(err: unknown): unknown {
  if (isDuplicateKeyError(err)) return err;
  const message = (err as Error | null)?.message ?? '';
  if (/UNIQUE constraint failed|duplicate key value violates unique constraint/.test(message)) {
    return Object.assign(new Error(`E11000 duplicate key error: ${message.replace(/^.*\] /, '')}`), { code: DUPLICATE_KEY });
  }
  return err;
}

async function translating<R>(run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (err) {
    throw normalized(err);
  }
}

function isCondition(value: unknown): value is Document {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** Whether the update has a `$pull` by condition, which FerretDB would silently ignore. */
function pullsByCondition(update: Document): boolean {
  return isCondition(update.$pull) && Object.values(update.$pull as Document).some(isCondition);
}

function valueAt(doc: Document, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) value = isCondition(value) ? (value as Document)[part] : undefined;
  return value;
}

/** The matching elements as `$pull` would remove them: by a query for documents, by operators for values. */
function pulled(condition: Document, element: unknown): boolean {
  const operators = Object.keys(condition).every((key) => key.startsWith('$'));
  if (operators) return new Query({ v: condition }).test({ v: element });
  return isCondition(element) && new Query(condition).test(element);
}

/** The update with each conditional `$pull` replaced by a `$set` of what remains, given the document. */
function withPullsApplied(update: Document, doc: Document): Document {
  const pulls = update.$pull as Document;
  const rest: Document = {};
  const set: Document = { ...(update.$set as Document | undefined) };
  for (const [path, condition] of Object.entries(pulls)) {
    if (!isCondition(condition)) {
      rest[path] = condition;
      continue;
    }
    const array = valueAt(doc, path);
    if (Array.isArray(array)) set[path] = array.filter((element) => !pulled(condition, element));
  }
  const out: Document = { ...update };
  delete out.$pull;
  if (Object.keys(rest).length > 0) out.$pull = rest;
  if (Object.keys(set).length > 0) out.$set = set;
  return out;
}

/** A top-level projection (`{a: 1, b: 1}` or `{a: 0}`), as findAndModify would have applied it. */
function project<T extends Document>(doc: T | null, projection: Document | undefined): T | null {
  if (!doc || !projection) return doc;
  const entries = Object.entries(projection);
  const including = entries.some(([key, on]) => key !== '_id' && on);
  const out: Document = {};
  if (including) {
    if (projection._id !== 0) out._id = doc._id;
    for (const [key, on] of entries) if (on && key !== '_id' && key in doc) out[key] = doc[key];
  } else {
    for (const [key, value] of Object.entries(doc)) if (projection[key] !== 0) out[key] = value;
  }
  return out as T;
}

export class FerretDatabase {
  private readonly locks: DriverCollection<LockDoc>;
  /** Per lock id, the tail of this process's queue for it. */
  private readonly queues = new Map<string, Promise<void>>();
  private readonly ttls = new Map<string, Ttl>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly options: FerretOptions,
  ) {
    this.locks = db.collection<LockDoc>(LOCKS);
    this.timer = setInterval(() => void this.sweep(), options.ttlSweepIntervalMs);
    this.timer.unref();
  }

  collection<T extends BaseDoc>(name: string): Collection<T> {
    return new FerretCollection<T>(this.db.collection<T>(name), this);
  }

  close(): void {
    clearInterval(this.timer);
  }

  registerTtl(ttl: Ttl): void {
    this.ttls.set(`${ttl.collection}\u0000${ttl.field}`, ttl);
  }

  /** Removes what a TTL index would have removed by now. */
  async sweep(now = new Date()): Promise<void> {
    for (const { collection, field, seconds } of this.ttls.values()) {
      try {
        await this.db.collection(collection).deleteMany({ [field]: { $lt: new Date(now.getTime() - seconds * 1000) } });
      } catch (err) {
        this.options.onBackgroundError(err as Error);
      }
    }
  }

  /** Runs `fn` while holding the lock of one document, queued behind this process's other holders. */
  async withLock<R>(collection: string, id: unknown, fn: () => Promise<R>): Promise<R> {
    const lockId = lockIdOf(collection, id);
    const before = this.queues.get(lockId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.queues.set(lockId, tail);
    await before;
    try {
      const token = await this.acquire(lockId);
      try {
        return await fn();
      } finally {
        await this.locks.deleteOne({ _id: lockId, token }).catch(() => {});
      }
    } finally {
      release();
      if (this.queues.get(lockId) === tail) this.queues.delete(lockId);
    }
  }

  private async acquire(lockId: string): Promise<string> {
    const token = randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        await this.locks.insertOne({ _id: lockId, token, expiresAt: new Date(Date.now() + LEASE_MS) });
        return token;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
      const held = await this.locks.findOne({ _id: lockId });
      if (held && held.expiresAt.getTime() < Date.now()) {
        // Its holder died (or stalled past the lease): take the lock over from that holder only.
        await this.locks.deleteOne({ _id: lockId, token: held.token });
        continue;
      }
      // Another instance holds it for one write: a short, growing, jittered pause.
      await delay(Math.random() * Math.min(MAX_BACKOFF_MS, 1 + attempt));
    }
  }
}

/** The port's filter is the driver's, narrowed: a generic one only needs telling so. */
function driverFilter<T>(filter: Filter<T>): DriverFilter<T> {
  return filter as DriverFilter<T>;
}

/** `operations` cut after every {@link BULK_COMMAND_UPDATES} updates (inserts and deletes hold nothing open). */
function byUpdates<O extends object>(operations: O[]): O[][] {
  const chunks: O[][] = [[]];
  let updates = 0;
  for (const operation of operations) {
    chunks.at(-1)!.push(operation);
    if ('updateOne' in operation || 'updateMany' in operation || 'replaceOne' in operation) {
      if (++updates % BULK_COMMAND_UPDATES === 0) chunks.push([]);
    }
  }
  return chunks.filter((chunk) => chunk.length > 0);
}

/**
 * The `_id` of a document's lock: its collection and `_id`, joined by `$`, which no collection
 * name holds. Not by U+0000: FerretDB on PostgreSQL stores documents as jsonb, which refuses that
 * character, so every conditional write failed there (SQLSTATE 22P05).
 */
function lockIdOf(collection: string, id: unknown): string {
  return `${collection}$${String(id)}`;
}

class FerretCollection<T extends BaseDoc> implements Collection<T> {
  readonly collectionName: string;

  constructor(
    private readonly raw: DriverCollection<T>,
    private readonly database: FerretDatabase,
  ) {
    this.collectionName = raw.collectionName;
  }

  insertOne(doc: Parameters<Collection<T>['insertOne']>[0]) {
    return translating(() => this.raw.insertOne(doc));
  }

  findOne(portFilter: Filter<T>, options?: FindOptions) {
    return this.raw.findOne(driverFilter(portFilter), options ?? {});
  }

  find(portFilter: Filter<T>, options?: FindOptions) {
    return this.raw.find(driverFilter(portFilter), options ?? {});
  }

  countDocuments(portFilter?: Filter<T>) {
    return this.raw.countDocuments(driverFilter(portFilter ?? {}));
  }

  aggregate<R extends Document = Document>(pipeline: PipelineStage[]) {
    return this.raw.aggregate<R>(pipeline);
  }

  /** In commands of at most {@link BULK_COMMAND_UPDATES} updates each, one after the other: see there. */
  async bulkWrite(operations: Parameters<Collection<T>['bulkWrite']>[0], options?: { ordered?: boolean }): Promise<BulkWriteResultLike> {
    const total: BulkWriteResultLike = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
    let failure: unknown;
    for (const chunk of byUpdates(operations)) {
      try {
        const result = await translating(() => this.raw.bulkWrite(chunk, options ?? {}));
        for (const field of Object.keys(total) as Array<keyof BulkWriteResultLike>) total[field] += result[field];
      } catch (err) {
        // Ordered, the first failure ends the write, as one command would; unordered, the rest still runs.
        if (options?.ordered !== false) throw err;
        failure ??= err;
      }
    }
    if (failure !== undefined) throw failure;
    return total;
  }

  deleteMany(portFilter: Filter<T>) {
    return this.raw.deleteMany(driverFilter(portFilter));
  }

  async deleteOne(portFilter: Filter<T>): Promise<{ deletedCount: number }> {
    const filter = driverFilter(portFilter);
    for (;;) {
      const target = await this.raw.findOne(filter, { projection: { _id: 1 } });
      if (!target) return { deletedCount: 0 };
      const result = await this.database.withLock(this.collectionName, target._id, () =>
        this.raw.deleteOne(this.still(target._id, filter)),
      );
      // Changed before the lock was had, so that it no longer matches: look again.
      if (result.deletedCount > 0) return { deletedCount: result.deletedCount };
    }
  }

  async createIndex(keys: Parameters<Collection<T>['createIndex']>[0], options: IndexOptions = {}): Promise<string> {
    const { expireAfterSeconds, ...rest } = options;
    if (expireAfterSeconds !== undefined) {
      const fields = Object.keys(keys as Document);
      if (fields.length !== 1) throw new Error('A TTL index must have exactly one field');
      this.database.registerTtl({ collection: this.collectionName, field: fields[0]!, seconds: expireAfterSeconds });
    }
    return translating(() => this.raw.createIndex(keys, rest));
  }

  async findOneAndUpdate(portFilter: Filter<T>, portUpdate: UpdateFilter<T>, options: FindOneAndUpdateOptions) {
    const [filter, update] = [driverFilter(portFilter), portUpdate as DriverUpdate<T>];
    const { projection, sort, upsert, returnDocument } = options;
    for (;;) {
      const target = await this.raw.findOne(filter, { projection: { _id: 1 }, ...(sort ? { sort } : {}) });
      if (!target) {
        if (!upsert) return null;
        const inserted = await this.upserting(filter, () =>
          this.raw.findOneAndUpdate(filter, update, { upsert: true, returnDocument: returnDocument ?? 'before' }),
        );
        if (inserted === 'exists') continue;
        return project(inserted, projection);
      }
      const doc = await this.database.withLock(this.collectionName, target._id, async () => {
        const change = await this.ownPulls(target._id, filter, update);
        if (change === null) return null;
        return translating(() =>
          this.raw.findOneAndUpdate(this.still(target._id, filter), change, { returnDocument: returnDocument ?? 'before' }),
        );
      });
      if (doc) return project(doc, projection);
    }
  }

  async updateOne(portFilter: Filter<T>, portUpdate: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResultLike> {
    const [filter, update] = [driverFilter(portFilter), portUpdate as DriverUpdate<T>];
    for (;;) {
      const target = await this.raw.findOne(filter, { projection: { _id: 1 } });
      if (!target) {
        if (!options?.upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
        const result = await this.upserting(filter, () => this.raw.updateOne(filter, update, { upsert: true }));
        if (result === 'exists') continue;
        return result;
      }
      const result = await this.database.withLock(this.collectionName, target._id, async () => {
        const change = await this.ownPulls(target._id, filter, update);
        if (change === null) return null;
        return translating(() => this.raw.updateOne(this.still(target._id, filter), change));
      });
      if (result && result.matchedCount > 0) return result;
    }
  }

  async updateMany(portFilter: Filter<T>, portUpdate: UpdateFilter<T>, options?: UpdateOptions): Promise<UpdateResultLike> {
    const [filter, update] = [driverFilter(portFilter), portUpdate as DriverUpdate<T>];
    const targets = await this.raw.find(filter, { projection: { _id: 1 } }).toArray();
    const total: UpdateResultLike = { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
    for (const { _id } of targets) {
      const result = await this.database.withLock(this.collectionName, _id, async () => {
        const change = await this.ownPulls(_id, filter, update);
        if (change === null) return null;
        return translating(() => this.raw.updateOne(this.still(_id, filter), change));
      });
      total.matchedCount += result?.matchedCount ?? 0;
      total.modifiedCount += result?.modifiedCount ?? 0;
    }
    if (total.matchedCount === 0 && options?.upsert) return this.updateOne(portFilter, portUpdate, options);
    return total;
  }

  /**
   * The update to send, with conditional `$pull`s worked out on the document as it stands (the
   * caller holds its lock); null when the document no longer matches.
   */
  private async ownPulls(id: unknown, filter: DriverFilter<T>, update: DriverUpdate<T>): Promise<DriverUpdate<T> | null> {
    if (!pullsByCondition(update as Document)) return update;
    const doc = await this.raw.findOne(this.still(id, filter));
    return doc ? (withPullsApplied(update as Document, doc) as DriverUpdate<T>) : null;
  }

  /** The filter, narrowed to one document found by it: it still holds once the lock is had, or not. */
  private still(id: unknown, filter: DriverFilter<T>): DriverFilter<T> {
    return { $and: [{ _id: id }, filter] } as DriverFilter<T>;
  }

  /**
   * An upsert that found nothing: the insert FerretDB makes is settled by the unique `_id` (and any
   * unique index). Beaten to it by a concurrent upsert, the document now exists: 'exists' says to
   * take the update path.
   */
  private async upserting<R>(filter: DriverFilter<T>, run: () => Promise<R>): Promise<R | 'exists'> {
    try {
      return await translating(run);
    } catch (err) {
      if (isDuplicateKeyError(err) && (await this.raw.findOne(filter, { projection: { _id: 1 } }))) return 'exists';
      throw err;
    }
  }
}
