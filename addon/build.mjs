// Bundles the add-on for Apps Script: addon/entry.ts (and the shared registry it uses) into one
// IIFE in addon/dist/Code.js, plus a top-level function per export so menus, triggers and
// google.script.run can find them, and appsscript.json beside it. clasp pushes addon/dist.
// The manifest's urlFetchWhitelist is the server's address: ADDON_SERVER_URL (https only, as Apps
// Script requires); there is no default, since no address is right for everyone.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}addon/dist`;
const GLOBAL = '__prospecta';

/** A module's exports, evaluated now in Node (bundled whole, TypeBox included). */
async function evaluate(file) {
  const out = await build({ absWorkingDir: root, entryPoints: [file], bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'warning' });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

/** JSON-like data with no symbol keys: a TypeBox schema carries its Kind symbol, so it is not. */
function isPlain(value) {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return true;
  if (Array.isArray(value)) return value.every(isPlain);
  if (typeof value !== 'object' || Object.getOwnPropertySymbols(value).length > 0) return false;
  return Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(isPlain);
}

/**
 * The registry facts (addon/api/registry.ts) and the constants of the shared schemas the add-on
 * imports become the data they evaluate to, so Code.js carries no schema and no TypeBox. A schema
 * value imported by mistake is no plain data: the build then fails naming the missing export.
 */
function asData() {
  const cache = new Map();
  return {
    name: 'registry-as-data',
    setup(b) {
      b.onLoad({ filter: /[\\/](shared[\\/]schemas[\\/][\w-]+|addon[\\/]api[\\/]registry)\.ts$/ }, async (args) => {
        if (!cache.has(args.path)) {
          const module = await evaluate(args.path);
          const lines = Object.entries(module).filter(([, value]) => isPlain(value)).map(([name, value]) => `export const ${name} = ${JSON.stringify(value)};`);
          cache.set(args.path, lines.join('\n'));
        }
        return { contents: cache.get(args.path), loader: 'js' };
      });
    },
  };
}

/** The whitelist entry for `serverUrl`, or why it cannot be one. */
export function whitelistEntry(serverUrl) {
  if (!serverUrl) {
    throw new Error('Set ADDON_SERVER_URL to your prospecta server\'s https address, e.g. ADDON_SERVER_URL=https://prospecta.yourcompany.com npm run addon:build: Apps Script fetches only the addresses its manifest lists.');
  }
  let url;
  try {
    url = new URL(serverUrl);
  } catch {
    throw new Error(`ADDON_SERVER_URL is not a URL: ${serverUrl}`);
  }
  if (url.protocol !== 'https:') throw new Error(`ADDON_SERVER_URL must start with https:// (Apps Script fetches only https addresses), not ${url.protocol}//`);
  return `${url.origin}${url.pathname.replace(/\/*$/, '/')}`;
}

/**
 * `entry` bundled for Apps Script: one IIFE under a global, then a top-level function per export
 * (Apps Script finds menu items, triggers, sidebar calls and custom functions only as top-level
 * functions). A stub keeps its export's JSDoc when that declares `@customfunction`, since Sheets
 * reads the autocomplete text and parameters from the top-level function's comment.
 */
export async function bundleScript(entry, { define = {} } = {}) {
  // Whitespace and comments go (every execution parses the file); names stay, so stack traces read.
  const common = { absWorkingDir: root, entryPoints: [entry], bundle: true, target: 'es2020', logLevel: 'warning', plugins: [asData()], minifyWhitespace: true, minifySyntax: true, define };
  // An ESM build only to learn the entry's export names.
  const probe = await build({ ...common, format: 'esm', write: false, metafile: true, outfile: 'probe.js' });
  const exports = Object.values(probe.metafile.outputs).flatMap((o) => o.exports);
  const bundle = await build({ ...common, format: 'iife', globalName: GLOBAL, write: false, outfile: 'Code.js' });
  const source = readFileSync(`${root}${entry}`, 'utf8');
  const stubs = exports.map((name) => {
    const declared = new RegExp(`(/\\*\\*(?:(?!\\*/)[\\s\\S])*?@customfunction(?:(?!\\*/)[\\s\\S])*\\*/)\\s*export function ${name}\\(([^)]*)\\)`).exec(source);
    if (!declared) return `function ${name}() { return ${GLOBAL}.${name}.apply(this, arguments); }`;
    const params = declared[2].split(',').map((p) => p.trim().replace(/[?:=].*$/s, '').replace(/^\.\.\./, '').trim()).filter(Boolean);
    return `${declared[1]}\nfunction ${name}(${params.join(', ')}) { return ${GLOBAL}.${name}.apply(this, arguments); }`;
  });
  return { code: `${bundle.outputFiles[0].text}\n${stubs.join('\n')}\n`, exports, global: GLOBAL };
}

/** `serverUrl`: the prospecta server the add-on may call (its manifest's only fetch address). */
export async function buildAddon({ serverUrl } = {}) {
  const whitelisted = whitelistEntry(serverUrl);
  // The add-on calls the server its manifest names; Settings then asks only for the key.
  const { code, exports } = await bundleScript('addon/entry.ts', { define: { PROSPECTA_SERVER_URL: JSON.stringify(whitelisted) } });
  await mkdir(outdir, { recursive: true });
  await writeFile(`${outdir}/Code.js`, code);
  // The sidebar: one HTML file with its CSS and script inlined (HtmlService serves one file).
  const script = await build({ absWorkingDir: root, entryPoints: ['addon/sidebar/sidebar.ts'], bundle: true, format: 'iife', target: 'es2019', write: false, outfile: 'sidebar.js', logLevel: 'warning' });
  const html = (await readFile(`${root}addon/sidebar/sidebar.html`, 'utf8'))
    .replace('/*CSS*/', () => readFileSync(`${root}addon/sidebar/sidebar.css`, 'utf8'))
    .replace('/*SCRIPT*/', () => script.outputFiles[0].text.replace(/<\/script/gi, '<\\/script'));
  await writeFile(`${outdir}/Sidebar.html`, html);
  // Apps Script only fetches whitelisted prefixes.
  const manifest = JSON.parse(await readFile(`${root}appsscript.json`, 'utf8'));
  manifest.urlFetchWhitelist = [whitelisted];
  await writeFile(`${outdir}/appsscript.json`, JSON.stringify(manifest, null, 2) + '\n');
  return { exports };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const { exports } = await buildAddon({ serverUrl: process.env.ADDON_SERVER_URL });
    console.log(`addon/dist: Code.js (${exports.join(', ')}), Sidebar.html and appsscript.json for ${process.env.ADDON_SERVER_URL}`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
