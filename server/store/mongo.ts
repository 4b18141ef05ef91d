/**
 * The MongoDB adapter: the official driver, unwrapped. Its collections already satisfy the
 * storage port (see check-driver.ts), so repositories call the driver directly.
 */
import { MongoClient } from 'mongodb';
import type { BaseDoc, Collection, Store } from './port.ts';

const DEFAULT_DATABASE = 'prospecta';

/** The database named in the URI's path, if any (`mongodb://host/name?options`). */
function databaseInUri(uri: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]*)/.exec(uri)?.[1];
  return path ? decodeURIComponent(path) : undefined;
}

export async function openMongoStore(uri: string, dbName?: string): Promise<Store> {
  const client = new MongoClient(uri);
  await client.connect();
  const db = client.db(dbName ?? databaseInUri(uri) ?? DEFAULT_DATABASE);
  return {
    kind: 'mongodb',
    collection: <T extends BaseDoc>(name: string): Collection<T> => db.collection<T>(name),
    close: () => client.close(),
  };
}
