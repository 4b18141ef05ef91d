/**
 * Which registry release is loaded, and since when: the most recent import that finished
 * (`registry_imports`, written by the importer), for `GET /health`, the provider catalog's
 * `receita_federal` entry, and the importer's refusal to put an older release over a newer one.
 */
import type { Store } from '../store/port.ts';
import type { Registry } from './registry/registry.ts';

export interface LoadedRelease {
  /** `YYYY-MM`. */
  release: string;
  /** When its import finished. */
  importedAt: Date;
  /** Whether every file was read whole (an incomplete import kept what it could read, and removed nothing). */
  complete: boolean;
  /** The demo's synthetic release, which any real one may replace. */
  synthetic: boolean;
  /** Establishments it holds; null where its import was resumed on MongoDB (each run counts only what it wrote). */
  establishments: number | null;
}

interface ImportRecord {
  _id: string;
  status: string;
  finishedAt: Date | null;
  synthetic?: boolean;
  summary?: { establishments?: number; resumed?: boolean } | null;
}

/** The release of the last import that finished, or null before any. */
export async function loadedRelease(store: Store): Promise<LoadedRelease | null> {
  const [last] = await store
    .collection<ImportRecord>('registry_imports')
    .find({ status: { $in: ['complete', 'incomplete'] } }, { sort: { finishedAt: -1 }, limit: 1 })
    .toArray();
  if (!last?.finishedAt) return null;
  return {
    release: last._id,
    importedAt: new Date(last.finishedAt),
    complete: last.status === 'complete',
    synthetic: last.synthetic === true,
    establishments: last.summary && !last.summary.resumed ? (last.summary.establishments ?? null) : null,
  };
}

const TTL_MS = 30_000;

/** {@link loadedRelease}, read at most every 30 seconds (health checks are frequent), and at once after an import here. */
export class Releases {
  private cached: { value: Promise<LoadedRelease | null>; at: number } | undefined;

  constructor(
    private readonly store: Store,
    /** The embedded store's release files: the one in service is the release loaded. */
    private readonly registry?: Registry,
  ) {}

  loaded(): Promise<LoadedRelease | null> {
    let inFiles;
    try {
      inFiles = this.registry?.meta();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (inFiles) {
      const { release, importedAt, complete, synthetic, establishments } = inFiles;
      return Promise.resolve({ release, importedAt: new Date(importedAt), complete, synthetic, establishments });
    }
    if (!this.cached || Date.now() - this.cached.at > TTL_MS) {
      const value = loadedRelease(this.store);
      value.catch(() => (this.cached = undefined));
      this.cached = { value, at: Date.now() };
    }
    return this.cached.value;
  }

  changed(): void {
    this.cached = undefined;
  }
}

/** As `GET /health` and the provider catalog give it. */
export function releaseView(loaded: LoadedRelease | null): { release: string; importedAt: string; complete: boolean; establishments: number | null } | null {
  return loaded && { release: loaded.release, importedAt: loaded.importedAt.toISOString(), complete: loaded.complete, establishments: loaded.establishments };
}
