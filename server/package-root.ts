/**
 * The folder holding package.json. This module sits one level below it both as source
 * (server/) and bundled (dist/server.mjs), so the same URL works in tests and in production.
 */
export const PACKAGE_ROOT = new URL('../', import.meta.url);
