// Bundles the server and the CLI into dist/ with esbuild. npm packages stay external (they are
// installed beside it), but for mingo; otherwise only our TypeScript is compiled. The dashboard's front end is bundled
// for browsers into dist/dashboard. The add-on has its own addon/build.mjs.
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
    // Every package stays external but mingo, which is bundled: loaded from node_modules, its
    // hundreds of CommonJS files took a second of the server's start on a busy machine.
    plugins: [externalPackagesBut(['mingo'])],
    sourcemap: true,
    logLevel: 'warning',
  });
}

/** Marks every bare import external, except those of the packages named. */
function externalPackagesBut(bundled) {
  return {
    name: 'external-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]|^\.[^./]|^\.\.[^/]/ }, (args) => {
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        if (args.path.startsWith('node:') || !bundled.includes(name)) return { path: args.path, external: true };
        return undefined;
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
