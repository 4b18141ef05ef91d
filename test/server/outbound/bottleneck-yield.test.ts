/**
 * Bottleneck's zero-delay yields run on setImmediate once a server has started, and not merely
 * because its modules were imported: the patch is applied at start-up, where it can be seen.
 */
import { describe, expect, it, vi } from 'vitest';
import { bottleneckYieldPatched, patchBottleneckYield } from '../../../server/outbound/bottleneck-yield.ts';
import { closeLimiter, createLimiter, runLimited } from '../../../server/outbound/limiter.ts';
import { startTestApp } from '../../helpers/app.ts';

/** Zero-delay timers Bottleneck's store sets to yield while one call goes through a limiter. */
async function zeroDelayYieldsPerCall(): Promise<number> {
  const limiter = createLimiter('yield-test', {});
  const setTimeout = globalThis.setTimeout;
  let yields = 0;
  // Bottleneck also starts each job on a timer of its own; only the store's yields are counted.
  const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, delay?: number) => {
    if (!delay && new Error().stack?.includes('LocalDatastore')) yields++;
    return setTimeout(callback, delay);
  }) as typeof setTimeout);
  try {
    await runLimited(limiter, async () => 'ok', { name: 'Test' });
    return yields;
  } finally {
    spy.mockRestore();
    await closeLimiter(limiter);
  }
}

describe('Bottleneck yield patch', () => {
  it('is not applied by importing the server, and is in effect once a server has started', async () => {
    // Each test file runs in a process of its own: nothing here has started a server yet.
    expect(bottleneckYieldPatched()).toBe(false);
    expect(await zeroDelayYieldsPerCall()).toBeGreaterThan(0);

    const app = await startTestApp();
    try {
      expect(bottleneckYieldPatched()).toBe(true);
      expect(await zeroDelayYieldsPerCall()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('is idempotent', async () => {
    patchBottleneckYield();
    patchBottleneckYield();
    expect(bottleneckYieldPatched()).toBe(true);
    expect(await zeroDelayYieldsPerCall()).toBe(0);
  });
});
