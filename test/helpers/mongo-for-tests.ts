/**
 * Finds the MongoDB-wire server for a test run (global-setup.ts), once: TEST_MONGODB_URI or
 * MONGODB_URI when set (.ci/run starts FerretDB and sets it), else a mongodb-memory-server over a
 * mongod binary already here (on PATH, named by MONGOMS_SYSTEM_BINARY, or in its cache). Tests never
 * download one. Also finds a FerretDB binary, for the tests that stop and restart their own server.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { MongoClient } from 'mongodb';
import { MongoMemoryServer } from 'mongodb-memory-server-core';

export interface MongoForTestRun {
  uri: string | null;
  /** Why there is none (one line saying how to get one), when uri is null. */
  reason: string;
  ferretdbBin: string | null;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 15_000;
const HOW =
  'run a MongoDB-wire server and point the tests at it: `MONGODB_URI=mongodb://127.0.0.1:27017/ npm test` ' +
  '(FerretDB: `scripts/ferretdb.sh start 27017 /tmp/ferretdb` builds it with Go and starts it); .ci/run does this';

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Why the server at `uri` cannot be used, or null when it answers a ping. */
async function mongoProblem(uri: string): Promise<string | null> {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
    return null;
  } catch (err) {
    return (err as Error).message.replace(/\s+/g, ' ').slice(0, 200);
  } finally {
    await client.close().catch(() => {});
  }
}

async function memoryServer(): Promise<{ uri: string; stop(): Promise<void> } | { reason: string }> {
  const mongod = onPath('mongod');
  if (mongod) process.env.MONGOMS_SYSTEM_BINARY ??= mongod;
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
    return { reason: (err as Error).message.replace(/\s+/g, ' ').trim().slice(0, 200) };
  } finally {
    clearTimeout(timer);
    console.warn = warn;
  }
}

/** A FerretDB binary that runs: FERRETDB_BIN, the one scripts/ferretdb.sh builds, or one on PATH. */
function findFerretdb(): string | null {
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'prospecta', 'ferretdb-1.24.2', 'ferretdb');
  for (const candidate of [process.env.FERRETDB_BIN, cache, onPath('ferretdb')]) {
    if (!candidate || !existsSync(candidate)) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore', timeout: 5000 });
      return candidate;
    } catch {
      // A `go install`ed 1.24.2 panics at start (see scripts/ferretdb.sh): look further.
    }
  }
  return null;
}

export async function findMongoForTests(): Promise<MongoForTestRun> {
  const configured = process.env.TEST_MONGODB_URI ?? process.env.MONGODB_URI;
  // The servers and CLIs that tests spawn inherit this process's environment: they keep to their
  // own embedded stores unless a test hands them a database.
  delete process.env.MONGODB_URI;
  const ferretdbBin = findFerretdb();
  const noFerretdb = ferretdbBin ? '' : '; and no FerretDB binary for the tests that stop and restart one (scripts/ferretdb.sh build)';
  if (configured) {
    const problem = await mongoProblem(configured);
    if (problem === null) {
      return {
        uri: configured,
        reason: ferretdbBin ? '' : `no FerretDB binary for the tests that stop and restart one: ${HOW}`,
        ferretdbBin,
        stop: async () => {},
      };
    }
    return { uri: null, reason: `no MongoDB-wire server answering at ${configured} (${problem}): ${HOW}${noFerretdb}`, ferretdbBin, stop: async () => {} };
  }
  const memory = await memoryServer();
  if ('uri' in memory) return { uri: memory.uri, reason: '', ferretdbBin, stop: memory.stop };
  return {
    uri: null,
    reason: `no MONGODB_URI, and mongodb-memory-server found no mongod here (${memory.reason}): the MongoDB halves of the store tests need one. ${HOW}${noFerretdb}`,
    ferretdbBin,
    stop: async () => {},
  };
}
