/**
 * The MongoDB adapter: the official driver. On MongoDB its collections already satisfy the
 * storage port (see check-driver.ts) and are handed out unwrapped; on FerretDB, which answers
 * `buildInfo` with a `ferretdbVersion`, they are wrapped by ferretdb.ts, which makes up for what
 * it does differently. Repositories never know which they got.
 */
import type { MongoClient } from 'mongodb';
import { FERRETDB_MAX_POOL_SIZE, FerretDatabase } from './ferretdb.ts';
import type { BaseDoc, Collection, Store } from './port.ts';

const DEFAULT_DATABASE = 'prospecta';
/** How long a call waits for an unreachable server before failing (a 503), and start-up before refusing to start. */
const SERVER_SELECTION_MS = 5_000;

export interface MongoStoreOptions {
  /** On FerretDB, how often documents past a TTL index's expiry are removed (MongoDB does it itself). */
  ttlSweepIntervalMs?: number;
  onBackgroundError?: (err: Error) => void;
}

/** The database named in the URI's path, if any (`mongodb://host/name?options`). */
function databaseInUri(uri: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(uri)?.[1];
  return path ? decodeURIComponent(path) : undefined;
}

/** Start-up's one line when the URI leads nowhere usable: what failed, without the password. */
export class MongoStartError extends Error {
  readonly code = 'MONGODB_UNREACHABLE';
}

function withoutPassword(uri: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/[^:/@]*):[^@/]*@/, '$1:***@');
}

async function connect(uri: string, maxPoolSize?: number): Promise<MongoClient> {
  // Loaded here, not at start-up: a server on the embedded store never needs the driver.
  const { MongoClient } = await import('mongodb');
  let client: MongoClient;
  try {
    client = new MongoClient(uri, { serverSelectionTimeoutMS: SERVER_SELECTION_MS, ...(maxPoolSize ? { maxPoolSize } : {}) });
  } catch (err) {
    throw new MongoStartError(`MONGODB_URI is not a usable MongoDB URI (${(err as Error).message})`);
  }
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.close().catch(() => {});
    throw new MongoStartError(`MONGODB_URI ${withoutPassword(uri)} cannot be used: ${(err as Error).message.replace(/\s+/g, ' ').slice(0, 300)}`);
  }
}

export async function openMongoStore(uri: string, dbName?: string, options: MongoStoreOptions = {}): Promise<Store> {
  let client = await connect(uri);
  const name = dbName ?? databaseInUri(uri) ?? DEFAULT_DATABASE;
  let ferretdb: boolean;
  try {
    const info = await client.db(name).command({ buildInfo: 1 });
    ferretdb = typeof info.ferretdbVersion === 'string';
  } catch (err) {
    await client.close().catch(() => {});
    const why = (err as Error).message.replace(/\s+/g, ' ').slice(0, 300);
    throw new MongoStartError(`MONGODB_URI ${withoutPassword(uri)} cannot be used: ${why}`);
  }
  if (ferretdb && !/[?&]maxPoolSize=/i.test(uri)) {
    // Fewer commands at once than FerretDB's backend pool can serve (see BULK_COMMAND_UPDATES).
    await client.close();
    client = await connect(uri, FERRETDB_MAX_POOL_SIZE);
  }
  const db = client.db(name);
  if (!ferretdb) {
    const collection = <T extends BaseDoc>(name: string): Collection<T> => db.collection<T>(name);
    return { kind: 'mongodb', collection, jsonByIds: jsonByIdsOf(collection), close: () => client.close() };
  }
  const ferret = new FerretDatabase(db, {
    ttlSweepIntervalMs: options.ttlSweepIntervalMs ?? 30_000,
    onBackgroundError: options.onBackgroundError ?? ((err) => process.emitWarning(err)),
  });
  const collection = <T extends BaseDoc>(name: string): Collection<T> => ferret.collection<T>(name);
  return {
    kind: 'mongodb',
    collection,
    jsonByIds: jsonByIdsOf(collection),
    close: async () => {
      ferret.close();
      await client.close();
    },
  };
}

/**
 * `jsonByIds` on MongoDB: the driver parses documents from BSON whatever is asked, so they are
 * found with the projection and written as JSON here.
 */
function jsonByIdsOf(collection: Store['collection']): Store['jsonByIds'] {
  return async (name, ids, omit) => {
    // The `_id` names each document in the answer, so it is read even when left out of its JSON.
    const projection = Object.fromEntries(omit.filter((field) => field !== '_id').map((field) => [field, 0]));
    const withoutId = omit.includes('_id');
    const docs = await collection<BaseDoc>(name).find({ _id: { $in: [...ids] } }, { projection }).toArray();
    const found = new Map<string, Buffer>();
    for (const doc of docs) {
      const id = doc._id;
      if (withoutId) delete (doc as Partial<BaseDoc>)._id;
      found.set(id, Buffer.from(JSON.stringify(doc)));
    }
    return found;
  };
}
