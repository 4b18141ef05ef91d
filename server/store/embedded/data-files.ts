/**
 * The data directory's layout. Each compaction starts a new generation: `snapshot-N.jsonl` holds
 * every document as of the start of `journal-N.jsonl`, and later journals follow it. State is
 * always the newest snapshot (if any) plus every journal of its generation or later, so older
 * files are superseded and a crash between any two steps of a compaction leaves a readable set.
 */
import { chmod, mkdir, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export type FileKind = 'snapshot' | 'journal';

/**
 * The store holds key hashes, people and the ledger: only its owner reads it. Every file is
 * created 0600 and the directory is 0700; files of an older version are narrowed at start-up.
 */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** Creates the data directory (0700), or narrows an existing one to 0700. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE });
  await chmod(dir, DIR_MODE);
}

/** Narrows the files of the store (and its lock) to 0600, for a store written by an older version. */
export async function narrowFileModes(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    if (NAME.test(name) || name === 'LOCK' || name === 'space-reserve' || name.endsWith(TEMP_SUFFIX)) await chmod(join(dir, name), FILE_MODE);
  }
}

const NAME = /^(snapshot|journal)-(\d+)\.jsonl$/;
/** A snapshot being written; never part of the state, so one left by a crash is simply removed. */
export const TEMP_SUFFIX = '.tmp';

export function fileName(kind: FileKind, generation: number): string {
  return `${kind}-${String(generation).padStart(6, '0')}.jsonl`;
}

export interface DataFile {
  kind: FileKind;
  generation: number;
  path: string;
}

export async function listDataFiles(dir: string): Promise<{ files: DataFile[]; temporary: string[] }> {
  const files: DataFile[] = [];
  const temporary: string[] = [];
  for (const name of await readdir(dir)) {
    const match = NAME.exec(name);
    if (match) files.push({ kind: match[1] as FileKind, generation: Number(match[2]), path: join(dir, name) });
    else if (name.endsWith(TEMP_SUFFIX)) temporary.push(join(dir, name));
  }
  files.sort((a, b) => a.generation - b.generation);
  return { files, temporary };
}

/** Makes creations, renames and removals of files in `dir` survive a power loss. */
export async function syncDir(dir: string): Promise<void> {
  // Windows cannot open a directory for fsync; NTFS journals its metadata itself.
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes the files a snapshot of `generation` supersedes (and leftover temporary files). */
export async function removeSuperseded(dir: string, generation: number): Promise<void> {
  const { files, temporary } = await listDataFiles(dir);
  const doomed = [...temporary, ...files.filter((f) => f.generation < generation).map((f) => f.path)];
  if (doomed.length === 0) return;
  for (const path of doomed) await unlink(path);
  await syncDir(dir);
}
