import { readFileSync } from 'node:fs';

/**
 * The version of the documented interface (`/openapi.json`'s `info.version`, `/health`'s
 * `interfaceVersion`): it changes with the contract, not with each build.
 */
export const INTERFACE_VERSION = '1.0.0';

/** The build: the package version (`/health`'s `version`); package.json is one level above both server/ and dist/. */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
