/**
 * Once per test run: build dist/ (tests that spawn the real server or CLI run the bundle) and
 * make sure a real Redis server answers. Without Redis the run fails here, saying so, rather
 * than silently skipping the tests that prove limits are shared across instances.
 */
import { Redis } from 'ioredis';
import { buildServer } from '../../build.mjs';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export default async function setup(): Promise<void> {
  await buildServer();
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(
      `The tests need a Redis server at ${TEST_REDIS_URL} (${(err as Error).message}). ` +
        'Start one (`redis-server --port 6379 --bind 127.0.0.1 --daemonize yes`) or set TEST_REDIS_URL; .ci/run does this.',
    );
  } finally {
    redis.disconnect();
  }
}
