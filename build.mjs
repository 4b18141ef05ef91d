// Bundles the server and the CLI into dist/ with esbuild. npm packages stay external (they are
// installed beside it), but for those of many files (BUNDLED); otherwise only our TypeScript is
// compiled. The dashboard's front end is bundled for browsers into dist/dashboard. The add-on has
// its own addon/build.mjs.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export async function buildServer() {
  await build({
    absWorkingDir: root,
    // The import's worker thread runs a script of its own, beside the CLI that starts it.
    entryPoints: { server: 'server/start/main.ts', cli: 'server/cli/main.ts', 'document-worker': 'server/receita/import/document-worker.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // Dynamic imports become chunks of their own, beside the entry points (a module finds files
    // from its own URL: package.json one level up, the document worker beside it): the CLI loads
    // only what a command needs, so `--help` answers without the server's modules.
    splitting: true,
    chunkNames: '[name]-[hash]',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [externalPackagesBut(BUNDLED)],
    // The CommonJS packages bundled into ESM require Node's own modules through the `require` in
    // scope, which an ES module has none of.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    sourcemap: true,
    logLevel: 'warning',
  });
}

/**
 * The packages bundled into dist/ rather than loaded from node_modules, with what they import in
 * turn: Node finds, reads and compiles a package's files one by one at every start. mingo's took a
 * second of the server's start on a busy machine; these took the CLI about 1.5 s of CPU a command,
 * 0.8 s once bundled. A package is bundled with those it shares classes with (ajv-formats
 * extends ajv's code generator; openid-client throws jose's errors), so that no instance made by
 * one copy meets a check against another's. Not bundled: native modules (better-sqlite3), what
 * reads files of its own at run time (pino's transports, swagger-ui-dist's pages), what is loaded
 * only when used (load-when-used.ts), and bottleneck, which bottleneck-yield.ts patches in
 * node_modules.
 */
const BUNDLED = [
  'mingo',
  '@sinclair/typebox',
  'ajv',
  'ajv-formats',
  'jose',
  'openid-client',
  'prom-client',
  'rate-limiter-flexible',
  'cli-progress',
  'yauzl',
  'yazl',
];

/** Marks every bare import external, except those of the packages named and what they import. */
function externalPackagesBut(bundled) {
  return {
    name: 'external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]|^\.[^./]|^\.\.[^/]/ }, (args) => {
        if (args.path.startsWith('node:')) return { path: args.path, external: true };
        // Only a bundled package's files are read from node_modules: what they import goes with them.
        if (args.importer.includes('/node_modules/')) return undefined;
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        return bundled.includes(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/**
 * The dashboard's scripts and styles, minified, under names carrying their content hash (served
 * as immutable), and dist/dashboard/manifest.json saying which file each entry point became.
 * Shared code between entry points and lazily loaded pages go to chunks of their own.
 */
export async function buildDashboard() {
  const out = `${root}dist/dashboard`;
  await rm(out, { recursive: true, force: true });
  const entries = { main: 'server/dashboard/web/main.tsx', 'api-reference': 'server/dashboard/web/api-reference.ts' };
  const entryPoints = Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(`${root}${file}`)));
  const result = await build({
    absWorkingDir: root,
    entryPoints,
    outdir: `${out}/assets`,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari15.6'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  const manifest = { entries: {} };
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    const name = Object.entries(entryPoints).find(([, source]) => source === output.entryPoint)?.[0];
    if (!name) continue;
    manifest.entries[name] = { js: basename(file), ...(output.cssBundle ? { css: basename(output.cssBundle) } : {}) };
  }
  await mkdir(out, { recursive: true });
  await writeFile(`${out}/manifest.json`, `${JSON.stringify(manifest, null, 2)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildServer();
  await buildDashboard();
}
