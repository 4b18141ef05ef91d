/**
 * A server's store checkpoints its WAL from a thread of its own (checkpointer.ts): its connection
 * never does, yet what the WAL holds reaches the database file once the WAL has grown, and closing
 * the store ends the thread and leaves no WAL behind. A one-shot command's store checkpoints as
 * SQLite does by default.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import { eventually } from '../../helpers/eventually.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const size = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

/** About 6 MiB of documents, past the 4 MiB of WAL at which the thread starts. */
async function fill(store: Awaited<ReturnType<typeof openEmbeddedStore>>): Promise<void> {
  const notes = store.collection<{ _id: string; text: string }>('notes');
  for (let i = 0; i < 60; i++) {
    await notes.bulkWrite(Array.from({ length: 50 }, (_, j) => ({ insertOne: { document: { _id: `${i}-${j}`, text: 'x'.repeat(2000) } } })));
  }
}

describe('WAL checkpoints', () => {
  it('run off the server’s connection once the WAL has grown, and stop with the store', async () => {
    const dir = await tempDir('checkpoints');
    const file = join(dir, 'store.db');
    const store = await openEmbeddedStore(dir);
    try {
      await fill(store);
      // The server's own connection moved nothing into the database file.
      expect(size(`${file}-wal`)).toBeGreaterThan(5 * 2 ** 20);
      expect(size(file)).toBeLessThan(2 ** 20);
      // The thread's checkpoint does.
      await eventually(() => size(file) > 5 * 2 ** 20, { message: 'the WAL to be checkpointed into store.db' });
    } finally {
      await store.close();
    }
    // The last connection to close (the server's, after the thread's) checkpointed and removed the WAL.
    expect(existsSync(`${file}-wal`)).toBe(false);
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT count(*) FROM "c:notes"').pluck().get()).toBe(3000);
    db.close();
  });

  it('are SQLite’s own in a one-shot command’s store', async () => {
    const dir = await tempDir('checkpoints');
    const store = await openEmbeddedStore(dir, { oneShot: true });
    try {
      await fill(store);
      // Checkpointed as it went, by its own connection: the database file holds most of the documents.
      expect(size(join(dir, 'store.db'))).toBeGreaterThan(2 * 2 ** 20);
    } finally {
      await store.close();
    }
  });
});
