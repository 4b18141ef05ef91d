// postinstall: installs test/mcp-conformance/ (the MCP conformance suite and the Node 24 it runs
// on) with its own lockfile, apart from the project's node_modules; its package.json says why.
// A production install (`npm ci --omit=dev`) has no tests to run, so it skips.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const omitted = (process.env.npm_config_omit ?? '').split(/[\s,]+/);
if (omitted.includes('dev') || process.env.NODE_ENV === 'production') process.exit(0);

const prefix = fileURLToPath(new URL('../test/mcp-conformance/', import.meta.url));
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
const { status } = spawnSync(npm[0], [...npm.slice(1), 'ci', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' });
process.exit(status ?? 1);
