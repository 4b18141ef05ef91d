/**
 * Bottleneck's zero-delay yields run on setImmediate once a server has started, and not merely
 * because its modules were imported: the patch is applied at start-up, where it can be seen.
 *
 * The patch replaces a method of a private file of Bottleneck 2.19.5: the first test fences it,
 * failing when the installed Bottleneck is another version or its method reads otherwise, so an
 * upgrade re-checks the patch (or retires it) instead of silently patching something else.
 */
import { createRequire } from 'node:module';
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

const require = createRequire(import.meta.url);

describe('Bottleneck yield patch', () => {
  it('replaces exactly the method it was written for (Bottleneck 2.19.5, LocalDatastore.yieldLoop)', () => {
    expect((require('bottleneck/package.json') as { version: string }).version).toBe('2.19.5');
    // Read before anything in this process patched it (each test file runs in a process of its own).
    const { prototype } = require('bottleneck/lib/LocalDatastore.js') as { prototype: { yieldLoop: () => unknown } };
    expect(bottleneckYieldPatched()).toBe(false);
    expect(prototype.yieldLoop.toString().replace(/\s+/g, ' ')).toBe(
      'yieldLoop(t = 0) { return new this.Promise(function (resolve, reject) { return setTimeout(resolve, t); }); }',
    );
  });

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
