/**
 * The registry's release files on the embedded store: DATA_DIR/registry/, one file per imported
 * release (release-file.ts), and `current.json`, naming the one in service. An import writes its
 * file beside the one in service and switches by renaming a new pointer over the old (one step:
 * a reader sees the old release or the new, never a mix); the replaced file is then unlinked.
 * Readers that still hold it keep reading it (an unlinked file lives while open), and the process
 * closes it a minute later, when no request can still be using it.
 *
 * Nothing is read at start: the pointer and the file's `meta` are read at the first use, and only
 * the pages a request touches after that.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, openSync, fsyncSync, closeSync } from 'node:fs';
import path from 'node:path';
import type { Store } from '../../store/port.ts';
import { ReleaseFile, type ReleaseMeta } from './release-file.ts';

const POINTER = 'current.json';
/** How long a replaced release stays open for the requests that began on it. */
const RETIRE_AFTER_MS = 60_000;

interface Pointer {
  file: string;
}

/** A release file's name, as `pathFor` makes it: `2026-10-1a2b3c4d.sqlite`. */
const RELEASE_FILE = /^[^.].*\.sqlite$/;

export class Registry {
  /** Undefined until first read; null when no release was imported into files yet. */
  private file: ReleaseFile | null | undefined;

  constructor(readonly dir: string) {}

  /** The release in service, opened at the first call. A damaged file throws, naming itself. */
  current(): ReleaseFile | null {
    if (this.file === undefined) {
      const pointer = this.pointer();
      this.file = pointer ? new ReleaseFile(path.join(this.dir, pointer.file)) : null;
    }
    return this.file;
  }

  /** The release in service, as its file describes it; null before the first import into files. */
  meta(): ReleaseMeta | null {
    return this.current()?.meta ?? null;
  }

  /** For start-up: what is wrong with the release in service, if anything (without reading more than its `meta`). */
  problem(): string | null {
    try {
      this.current();
      return null;
    } catch (err) {
      this.file = undefined;
      return (err as Error).message;
    }
  }

  /** The name of the file in service, if any. */
  inService(): string | null {
    return this.pointer()?.file ?? null;
  }

  /** Where an import of `release` by the run `run` writes. */
  pathFor(release: string, run: string): string {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    return path.join(this.dir, `${release}-${run.slice(0, 8)}.sqlite`);
  }

  /**
   * Puts the finished file at `filePath` in service, in one step, then removes every other release
   * file (those an earlier killed import left too).
   */
  switchTo(filePath: string): void {
    const file = path.basename(filePath);
    const opened = new ReleaseFile(filePath);
    const temp = path.join(this.dir, `${POINTER}.tmp`);
    writeFileSync(temp, JSON.stringify({ file } satisfies Pointer));
    syncFile(temp);
    renameSync(temp, path.join(this.dir, POINTER));
    syncFile(this.dir);
    const replaced = this.file;
    this.file = opened;
    if (replaced) setTimeout(() => replaced.close(), RETIRE_AFTER_MS).unref();
    this.removeAllBut(file);
  }

  /** Removes the release files other than `keep` and the one in service (an import starting afresh calls it). */
  removeAllBut(keep: string): void {
    const inService = this.inService();
    for (const name of listing(this.dir)) {
      if (!name.endsWith('.sqlite') && !name.endsWith('-journal')) continue;
      // A release file's own staging, rows and search tables' files go with it (receita/import/release-writer.ts, thread-staging.ts).
      const base = name.replace(/\.(stage|search|rows-\d+)\.sqlite(-journal)?$|\.sqlite(-journal)?$/, '');
      if (base === keep.replace(/\.sqlite$/, '') || `${base}.sqlite` === inService) continue;
      rmSync(path.join(this.dir, name), { force: true });
    }
  }

  /** Closes the release in service (the store closing). */
  close(): void {
    this.file?.close();
    this.file = undefined;
  }

  /**
   * The pointer as `switchTo` writes it: the name of a release file in this folder. Anything else
   * (a path elsewhere, `..`, no name at all) was edited or damaged by hand, and is named rather
   * than followed, or taken for a registry never imported.
   */
  private pointer(): Pointer | null {
    const file = path.join(this.dir, POINTER);
    let pointer: unknown;
    try {
      pointer = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new Error(`the registry's pointer ${file} cannot be read (${(err as Error).message}): import the release again`);
    }
    const name = (pointer as Partial<Pointer> | null)?.file;
    if (typeof name !== 'string') throw new Error(`the registry's pointer ${file} does not name a release file: import the release again`);
    if (path.basename(name) !== name || !RELEASE_FILE.test(name)) {
      throw new Error(`the registry's pointer ${file} names ${JSON.stringify(name)}, not a file of ${this.dir}: import the release again`);
    }
    return { file: name };
  }
}

function listing(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function syncFile(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const registries = new WeakMap<Store, Registry>();

/**
 * The registry files of a store: on the embedded store, under its directory; MongoDB keeps the
 * registry in its `companies` collection (shared by every process using it), so none.
 */
export function registryOf(store: Store): Registry | undefined {
  if (store.kind !== 'embedded' || !store.dataDir) return undefined;
  let registry = registries.get(store);
  if (!registry) registries.set(store, (registry = new Registry(path.join(store.dataDir, 'registry'))));
  return registry;
}
