/**
 * The folder holding package.json: the nearest one above this module, which is found rather than
 * assumed, since the module sits at different depths as source (server/lib/) and bundled (dist/).
 */
import { existsSync } from 'node:fs';

function packageRoot(from: URL): URL {
  for (let dir = new URL('./', from); ; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir))) return dir;
    if (dir.pathname === '/') throw new Error(`No package.json above ${from.pathname}`);
  }
}

export const PACKAGE_ROOT = packageRoot(new URL(import.meta.url));
