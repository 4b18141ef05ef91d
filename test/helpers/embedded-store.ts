/**
 * An embedded store in a directory of its own for each test, closed after it. `reopen` closes it
 * and opens the same directory again, as the next process would; tests that damage files close
 * and open `store` themselves.
 */
import { afterEach, beforeEach } from 'vitest';
import { openEmbeddedStore, type EmbeddedStoreOptions } from '../../server/store/embedded/store.ts';
import type { Store } from '../../server/store/port.ts';
import { tempDir } from './temp-dir.ts';

export interface StorePerTest {
  dir: string;
  store: Store;
  reopen(options?: EmbeddedStoreOptions): Promise<void>;
}

/** `options` are read at each opening, so a test may change what the next one uses. */
export function embeddedStorePerTest(name: string, options: () => EmbeddedStoreOptions = () => ({})): StorePerTest {
  const held: StorePerTest = {
    dir: '',
    store: undefined as unknown as Store,
    async reopen(reopenOptions = options()) {
      await held.store.close();
      held.store = await openEmbeddedStore(held.dir, reopenOptions);
    },
  };
  beforeEach(async () => {
    held.dir = await tempDir(name);
    held.store = await openEmbeddedStore(held.dir, options());
  });
  afterEach(async () => {
    await held.store.close();
  });
  return held;
}
