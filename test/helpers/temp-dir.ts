/**
 * The one way a test makes a folder: unique, under the system's temporary directory, and removed
 * when the test ends (or, made in `beforeAll`, when the file ends), whether it passed or not.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deferCleanup } from './cleanup.ts';

/**
 * A new empty folder named `prospecta-<name>-XXXXXX`. `parent` puts it elsewhere than the
 * temporary directory, for files that must resolve packages from this repository.
 */
export async function tempDir(name = 'test', { parent = tmpdir() }: { parent?: string } = {}): Promise<string> {
  const dir = await mkdtemp(path.join(parent, `prospecta-${name}-`));
  deferCleanup(() => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}
