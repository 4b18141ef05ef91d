// Bundles the add-on for Apps Script: addon/entry.ts (and the shared registry it uses) into one
// IIFE in addon/dist/Code.js, plus a top-level function per export so menus, triggers and
// google.script.run can find them, and appsscript.json beside it. clasp pushes addon/dist.
// ADDON_SERVER_URL replaces the manifest's urlFetchWhitelist with your server's address.
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}addon/dist`;
const GLOBAL = '__prospecta';

export async function buildAddon() {
  const common = { absWorkingDir: root, entryPoints: ['addon/entry.ts'], bundle: true, target: 'es2020', logLevel: 'warning' };
  // An ESM build only to learn the entry's export names.
  const probe = await build({ ...common, format: 'esm', write: false, metafile: true, outfile: 'probe.js' });
  const exports = Object.values(probe.metafile.outputs).flatMap((o) => o.exports);
  const bundle = await build({ ...common, format: 'iife', globalName: GLOBAL, write: false, outfile: 'Code.js' });
  const stubs = exports.map((name) => `function ${name}() { return ${GLOBAL}.${name}.apply(this, arguments); }`);
  await mkdir(outdir, { recursive: true });
  await writeFile(`${outdir}/Code.js`, `${bundle.outputFiles[0].text}\n${stubs.join('\n')}\n`);
  // Apps Script only fetches whitelisted prefixes: ADDON_SERVER_URL names your deployment.
  const manifest = JSON.parse(await readFile(`${root}appsscript.json`, 'utf8'));
  if (process.env.ADDON_SERVER_URL) manifest.urlFetchWhitelist = [process.env.ADDON_SERVER_URL.replace(/\/*$/, '/')];
  await writeFile(`${outdir}/appsscript.json`, JSON.stringify(manifest, null, 2) + '\n');
  return { exports };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { exports } = await buildAddon();
  console.log(`addon/dist: Code.js (${exports.join(', ')}) and appsscript.json`);
}
