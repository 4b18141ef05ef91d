/**
 * Runs in every test file (vitest `setupFiles`), before the file's own hooks: after each test it
 * stops the processes the test started and removes the folders it made (test/helpers/cleanup.ts),
 * and after the file what its `beforeAll` hooks started. Registered first, these hooks run after
 * the file's own `afterEach` and `afterAll`, which may still use those processes and folders.
 */
import { afterAll, afterEach, beforeEach } from 'vitest';
import { enterTest, runCleanups } from './cleanup.ts';

beforeEach(() => enterTest());
afterEach(() => runCleanups('test'));
afterAll(() => runCleanups('file'));
