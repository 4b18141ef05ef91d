// npm run bench:addon — bundles bench/addon-harness.ts (the add-on with the test harness's Apps
// Script fakes) into node_modules/.cache, beside the harness's HTTP worker, and runs it.
import { spawn } from 'node:child_process';
import { copyFile, mkdir } from 'node:fs/promises';
import { build } from 'esbuild';
import { root } from './lib.mjs';

const dir = `${root}node_modules/.cache/prospecta-bench-addon`;
await mkdir(dir, { recursive: true });
// The add-on's own build script stays where it is: it finds the add-on's sources from its own place.
const addonBuildInPlace = {
  name: 'addon-build-in-place',
  setup(b) {
    b.onResolve({ filter: /addon\/build\.mjs$/ }, () => ({ path: `${root}addon/build.mjs`, external: true }));
  },
};
await build({
  absWorkingDir: root,
  entryPoints: ['bench/addon-harness.ts'],
  outfile: `${dir}/harness.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  plugins: [addonBuildInPlace],
  logLevel: 'warning',
});
// The synchronous HTTP of the fake UrlFetchApp runs in this worker, found beside the bundle.
await copyFile(`${root}test/helpers/sync-http-worker.mjs`, `${dir}/sync-http-worker.mjs`);
const child = spawn(process.execPath, [`${dir}/harness.mjs`], { cwd: root, stdio: 'inherit', env: { ...process.env, PROSPECTA_ROOT: root } });
child.on('exit', (code) => process.exit(code ?? 1));
