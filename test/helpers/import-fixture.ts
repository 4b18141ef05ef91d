/**
 * The importer's tests: a release folder and an embedded store of their own for each test, and
 * `run` to import the one into the other. A server imports into the documents it holds; the CLI
 * bulk loads (its store is `oneShot`), leaving the collection to be read by the next process, so
 * with `oneShot` each import is followed by reopening the store, as the next command or the
 * server would.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach } from 'vitest';
import { importRelease, type ImportOptions, type ImportSummary } from '../../server/receita/import/importer.ts';
import type { Problem } from '../../server/receita/import/rows.ts';
import { embeddedStorePerTest, type StorePerTest } from './embedded-store.ts';
import { tempDir } from './temp-dir.ts';

/** The CLI builds a bulk load's documents in threads running this script (dist/ is built before the tests run). */
export const DOCUMENT_WORKER = new URL('../../dist/document-worker.mjs', import.meta.url);

export interface ImportFixture extends StorePerTest {
  /** The release folder the test writes. */
  release: string;
  problems: Problem[];
  oneShot: boolean;
  /** Set to DOCUMENT_WORKER to build documents in threads, as the CLI does. */
  documentWorker: URL | undefined;
  run(options?: Partial<ImportOptions>): Promise<ImportSummary>;
}

/** `folder`: the release's folder name inside its temporary directory, when the test needs one. */
export function importPerTest({ folder }: { folder?: string } = {}): ImportFixture {
  const fixture: ImportFixture = Object.assign(
    embeddedStorePerTest('store', () => ({ oneShot: fixture.oneShot })),
    {
      release: '',
      problems: [] as Problem[],
      oneShot: false,
      documentWorker: undefined as URL | undefined,
      async run(options: Partial<ImportOptions> = {}) {
        try {
          return await importRelease(fixture.store, {
            dir: fixture.release,
            release: '2026-10',
            onProblem: (p) => fixture.problems.push(p),
            ...(fixture.documentWorker ? { documentWorker: fixture.documentWorker } : {}),
            ...options,
          });
        } finally {
          if (fixture.oneShot) await fixture.reopen();
        }
      },
    },
  );
  beforeEach(async () => {
    const root = await tempDir('release');
    fixture.release = folder ? path.join(root, folder) : root;
    if (folder) await mkdir(fixture.release);
    fixture.problems = [];
  });
  return fixture;
}
