/**
 * Finds a MongoDB for the MongoDB half of the store tests: MONGODB_URI when set, else a
 * mongodb-memory-server instance over a mongod binary already here (on PATH, named by
 * MONGOMS_SYSTEM_BINARY, or in its cache). Tests never download one: without any, the half is
 * skipped with the reason printed.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MongoClient } from 'mongodb';
import { MongoMemoryServer } from 'mongodb-memory-server-core';
import { openMongoStore } from '../../../server/store/mongo.ts';
import type { Store } from '../../../server/store/port.ts';

export type MongoForTests = { uri: string; stop(): Promise<void> } | { uri: undefined; reason: string };

const START_TIMEOUT_MS = 15_000;

function mongodOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'mongod');
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

export async function mongoForTests(): Promise<MongoForTests> {
  const configured = process.env.MONGODB_URI;
  if (configured) return { uri: configured, stop: async () => {} };

  const onPath = mongodOnPath();
  if (onPath) process.env.MONGOMS_SYSTEM_BINARY ??= onPath;
  // Machines running the tests may not fetch binaries (and here cannot): only a mongod already present is used.
  process.env.MONGOMS_RUNTIME_DOWNLOAD ??= 'false';

  // It prints a long stack when it fails; the caller prints the one line that matters instead.
  const warn = console.warn;
  console.warn = () => {};
  const starting = MongoMemoryServer.create();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
  });
  try {
    const server = await Promise.race([starting, timeout]);
    return { uri: server.getUri(), stop: () => server.stop().then(() => undefined) };
  } catch (err) {
    // If it starts after all, do not leave a mongod running.
    starting.then((server) => server.stop()).catch(() => {});
    const why = (err as Error).message.replace(/\s+/g, ' ').trim().slice(0, 200);
    return { uri: undefined, reason: `no MONGODB_URI, and mongodb-memory-server could not start a mongod (${why})` };
  } finally {
    clearTimeout(timer);
    console.warn = warn;
  }
}

/** A store on a database of its own at `uri`, dropped by `dispose`: one test's MongoDB half. */
export async function throwawayMongoStore(uri: string): Promise<{ store: Store; dispose(): Promise<void> }> {
  const dbName = `prospecta_test_${randomUUID().replaceAll('-', '')}`;
  const store = await openMongoStore(uri, dbName);
  return {
    store,
    async dispose() {
      await store.close();
      const client = await MongoClient.connect(uri);
      await client.db(dbName).dropDatabase();
      await client.close();
    },
  };
}
