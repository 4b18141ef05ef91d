/**
 * The MongoDB-wire server of this test run (found once by test/helpers/global-setup.ts), for the
 * MongoDB halves of the store suites. Without one they skip; global setup has printed how to get
 * one, and under CI=true it has failed the run instead.
 */
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { inject } from 'vitest';
import { type MongoStoreOptions, openMongoStore } from '../../../server/store/mongo.ts';
import type { Store } from '../../../server/store/port.ts';

export type MongoForTests = { uri: string; stop(): Promise<void> } | { uri: undefined; reason: string };

export async function mongoForTests(): Promise<MongoForTests> {
  const uri = inject('mongodbUri');
  if (uri) return { uri, stop: async () => {} };
  return { uri: undefined, reason: 'no MongoDB-wire server (see the first lines of this run)' };
}

/** Whether the server at `uri` is FerretDB (tests of MongoDB semantics it does not follow skip there, saying so). */
export async function isFerretDb(uri: string): Promise<boolean> {
  const client = await MongoClient.connect(uri);
  try {
    return typeof (await client.db('admin').command({ buildInfo: 1 })).ferretdbVersion === 'string';
  } finally {
    await client.close();
  }
}

/** A database name no other test uses. */
export function throwawayDatabaseName(): string {
  return `prospecta_test_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
}

/** Drops a database that a test made (through a store or a server process). */
export async function dropDatabase(uri: string, dbName: string): Promise<void> {
  const client = await MongoClient.connect(uri);
  try {
    await client.db(dbName).dropDatabase();
  } finally {
    await client.close();
  }
}

/** A store on a database of its own at `uri`, dropped by `dispose`: one test's MongoDB half. */
export async function throwawayMongoStore(uri: string, options: MongoStoreOptions = {}): Promise<{ store: Store; dispose(): Promise<void> }> {
  const dbName = throwawayDatabaseName();
  const store = await openMongoStore(uri, dbName, options);
  return {
    store,
    async dispose() {
      await store.close();
      await dropDatabase(uri, dbName);
    },
  };
}
