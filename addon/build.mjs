// Bundles the add-on for Apps Script: addon/entry.ts (and the shared registry it uses) into one
// IIFE in addon/dist/Code.js, plus a top-level function per export so menus, triggers and
// google.script.run can find them, and appsscript.json beside it. clasp pushes addon/dist.
// ADDON_SERVER_URL replaces the manifest's urlFetchWhitelist with your server's address.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
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
  // The sidebar: one HTML file with its CSS and script inlined (HtmlService serves one file).
  const script = await build({ absWorkingDir: root, entryPoints: ['addon/sidebar/sidebar.ts'], bundle: true, format: 'iife', target: 'es2019', write: false, outfile: 'sidebar.js', logLevel: 'warning' });
  const html = (await readFile(`${root}addon/sidebar/sidebar.html`, 'utf8'))
    .replace('/*CSS*/', () => readFileSync(`${root}addon/sidebar/sidebar.css`, 'utf8'))
    .replace('/*SCRIPT*/', () => script.outputFiles[0].text.replace(/<\/script/gi, '<\\/script'));
  await writeFile(`${outdir}/Sidebar.html`, html);
  // Apps Script only fetches whitelisted prefixes: ADDON_SERVER_URL names your deployment.
  const manifest = JSON.parse(await readFile(`${root}appsscript.json`, 'utf8'));
  if (process.env.ADDON_SERVER_URL) manifest.urlFetchWhitelist = [process.env.ADDON_SERVER_URL.replace(/\/*$/, '/')];
  await writeFile(`${outdir}/appsscript.json`, JSON.stringify(manifest, null, 2) + '\n');
  return { exports };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { exports } = await buildAddon();
  console.log(`addon/dist: Code.js (${exports.join(', ')}), Sidebar.html and appsscript.json`);
}
