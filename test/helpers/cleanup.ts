/**
 * What a test starts or creates is gone when it ends, also when it fails midway: helpers register
 * an undo here (`deferCleanup`), and the per-file setup (test/helpers/setup.ts) runs the undos
 * after each test and, for what a `beforeAll` made, after the file. Undos run last first, so a
 * server is stopped before the folder it writes to is removed.
 *
 * Nothing here imports vitest: the same helpers run outside it (bench/addon-harness.ts), where
 * nothing runs the undos and they are simply never called.
 */
export type Cleanup = () => unknown;

const pending = { test: [] as Cleanup[], file: [] as Cleanup[] };
let inTest = false;

/** Runs `cleanup` when the current test ends; outside a test (in `beforeAll`), when the file ends. */
export function deferCleanup(cleanup: Cleanup): void {
  pending[inTest ? 'test' : 'file'].push(cleanup);
}

/** For test/helpers/setup.ts: a test (with its beforeEach and afterEach hooks) is running. */
export function enterTest(): void {
  inTest = true;
}

/** For test/helpers/setup.ts: runs the undos of the test or of the file, every one even if some fail. */
export async function runCleanups(scope: 'test' | 'file'): Promise<void> {
  if (scope === 'test') inTest = false;
  const errors: unknown[] = [];
  for (const cleanup of pending[scope].splice(0).reverse()) {
    try {
      await cleanup();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} cleanups failed`);
}
