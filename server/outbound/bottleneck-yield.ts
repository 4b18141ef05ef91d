/**
 * Bottleneck's in-process store yields to the event loop with setTimeout(0) a dozen times per
 * call, and each of those waits at least 1 ms: about 6 ms added to every outgoing call.
 * setImmediate still yields to pending I/O, without the timer's floor. Timed waits (t > 0) are
 * left as they are.
 *
 * A process applies this once at start-up, where it can be seen (server/start/main.ts, the CLI, the
 * tests' app), rather than as a side effect of importing the limiter. It replaces a method of a
 * private file of Bottleneck 2.19.5: test/server/outbound/bottleneck-yield.test.ts fails when the
 * installed version or that method differs, so an upgrade re-checks it.
 */
import { createRequire } from 'node:module';

interface LocalDatastorePrototype {
  Promise: PromiseConstructor;
  yieldLoop(t?: number): Promise<void>;
}

const LocalDatastore = createRequire(import.meta.url)('bottleneck/lib/LocalDatastore.js') as {
  prototype: LocalDatastorePrototype;
};

function yieldLoop(this: LocalDatastorePrototype, t = 0): Promise<void> {
  return new this.Promise<void>((resolve) => (t > 0 ? setTimeout(resolve, t) : setImmediate(resolve)));
}

/** Moves Bottleneck's zero-delay yields to setImmediate; calling it again changes nothing. */
export function patchBottleneckYield(): void {
  LocalDatastore.prototype.yieldLoop = yieldLoop;
}

/** Whether {@link patchBottleneckYield} is in effect in this process. */
export function bottleneckYieldPatched(): boolean {
  return LocalDatastore.prototype.yieldLoop === yieldLoop;
}
