// Bundles the server and the CLI into dist/ with esbuild. npm packages stay external (they are
// installed beside it); only our TypeScript is compiled. The add-on has its own addon/build.mjs.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export async function buildServer() {
  await build({
    absWorkingDir: root,
    // The import's worker thread runs a script of its own, beside the CLI that starts it.
    entryPoints: { server: 'server/main.ts', cli: 'server/cli/main.ts', 'document-worker': 'server/receita/import/document-worker.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildServer();
