/**
 * Once per test run: build dist/ (tests that spawn the real server or CLI run the bundle), and
 * find the services some tests need besides Node: a Redis server (limits shared across instances),
 * Chromium (the sidebar) and a MongoDB-wire server (the MongoDB halves of the store suites). Each is handed to the tests with `provide`; a test that needs one
 * reads it with `inject` and skips without it, so `npm test` passes on a machine with Node alone,
 * after one line saying what is missing and how to get it. Under CI=true a missing one fails the
 * run instead: there, every test must run (.ci/run installs both).
 */
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { buildDashboard, buildServer } from '../../build.mjs';
import { findMongoForTests } from './mongo-for-tests.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Redis server that answered PING, or null when none did (the tests needing one skip). */
    redisUrl: string | null;
    /** Chromium's executable, or null when there is none (the sidebar tests skip). */
    chromiumPath: string | null;
    /** A MongoDB-wire server that answered, or null (the MongoDB halves skip). Each test uses a database of its own. */
    mongodbUri: string | null;
    /** A FerretDB binary the fault tests may start and stop on ports of their own, or null. */
    ferretdbBin: string | null;
  }
}

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why Redis at `url` cannot be used, or null when it answers. */
async function redisProblem(url: string): Promise<string | null> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // The socket's own error (ECONNREFUSED...) says more than the rejection ("Connection is closed").
  let socketError: Error | undefined;
  redis.on('error', (err: Error) => (socketError ??= err));
  try {
    await redis.connect();
    await redis.ping();
    return null;
  } catch (err) {
    return (socketError ?? (err as Error)).message;
  } finally {
    redis.disconnect();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildServer();
  await buildDashboard();
  const ci = /^(true|1)$/i.test(process.env.CI ?? '');
  const missing: string[] = [];

  const redisError = await redisProblem(REDIS_URL);
  if (redisError !== null) {
    missing.push(
      `no Redis at ${REDIS_URL} (${redisError}): the tests of limits shared through Redis need one. ` +
        'Start one (`redis-server --port 6379 --bind 127.0.0.1 --daemonize yes`) or set TEST_REDIS_URL; .ci/run does this.',
    );
  }
  project.provide('redisUrl', redisError === null ? REDIS_URL : null);

  const hasChromium = existsSync(CHROMIUM_PATH);
  if (!hasChromium) {
    missing.push(
      `no Chromium at ${CHROMIUM_PATH}: the sidebar and dashboard tests need one. ` +
        'Install it (`apt-get install chromium`) or set CHROMIUM_PATH; .ci/run does this.',
    );
  }
  project.provide('chromiumPath', hasChromium ? CHROMIUM_PATH : null);

  const mongo = await findMongoForTests();
  if (mongo.reason) missing.push(mongo.reason);
  project.provide('mongodbUri', mongo.uri);
  project.provide('ferretdbBin', mongo.ferretdbBin);

  if (missing.length > 0) {
    if (ci) {
      await mongo.stop();
      throw new Error(`CI=true, so every test must run, but there is ${missing.join('\nAnd there is ')}`);
    }
    for (const line of missing) console.warn(`Skipping tests: ${line}`);
  }
  return mongo.stop;
}
