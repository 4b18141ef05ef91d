/**
 * The dashboard's bundled files (build.mjs → dist/dashboard): read once at start-up, gzipped
 * once, served from memory under names that carry their content hash, so a browser may keep
 * them forever. The manifest says which file each entry point became.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { AppContext } from '../http/state.ts';

export const ASSETS_PATH = '/dashboard/assets/';

/** What build.mjs writes to dist/dashboard/manifest.json: each entry's js and css file names. */
export interface Manifest {
  entries: Record<string, { js: string; css?: string }>;
}

/** A file served from memory, gzipped once. */
export interface StaticFile {
  type: string;
  body: Buffer;
  gzipped: Buffer;
}

export function staticFile(type: string, body: Buffer): StaticFile {
  return { type, body, gzipped: gzipSync(body, { level: 9 }) };
}

/** Answers with `file`, cached for a year: its name changes with its content (a hash or a version). */
export function serveImmutable(ctx: AppContext, file: StaticFile): void {
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.vary('Accept-Encoding');
  ctx.type = file.type;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzipped;
  } else {
    ctx.body = file.body;
  }
}

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

export class Assets {
  private readonly files = new Map<string, StaticFile>();

  private constructor(readonly manifest: Manifest | null) {}

  /** The build in `dir`, or an empty set that says the dashboard was not built. */
  static load(dir: URL): Assets {
    let manifest: Manifest;
    try {
      manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as Manifest;
    } catch {
      return new Assets(null);
    }
    const assets = new Assets(manifest);
    const folder = new URL('assets/', dir);
    for (const name of readdirSync(folder)) {
      const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
      if (!type) continue;
      assets.files.set(name, staticFile(type, readFileSync(new URL(name, folder))));
    }
    return assets;
  }

  /** The URL of an entry point's script and stylesheet. */
  entry(name: string): { js: string; css: string | null } | null {
    const entry = this.manifest?.entries[name];
    return entry ? { js: ASSETS_PATH + entry.js, css: entry.css ? ASSETS_PATH + entry.css : null } : null;
  }

  /** Answers `GET /dashboard/assets/<name>`; false when there is no such file. */
  serve(ctx: AppContext, name: string): boolean {
    const asset = this.files.get(name);
    if (!asset) return false;
    serveImmutable(ctx, asset);
    return true;
  }
}
