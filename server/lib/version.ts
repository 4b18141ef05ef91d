import { readFileSync } from 'node:fs';
import { PACKAGE_ROOT } from './package-root.ts';

/**
 * The version of the documented interface (`/openapi.json`'s `info.version`, `/health`'s
 * `interfaceVersion`): it changes with the contract, not with each build.
 */
export const INTERFACE_VERSION = '1.0.0';

/** The build: the package version (`/health`'s `version`). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as { version: string }
).version;
