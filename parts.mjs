// The parts map: every part of the tree, the layer it sits in and so what it may import. It is
// the one statement of the architecture's layers: eslint.config.mjs generates its import zones
// from it, docs/architecture.md shows it (the table between the `parts` markers is written by
// `npm run docs:parts`, and test/shared/parts-map.test.ts fails when the two differ or when a
// folder of server/ belongs to no part).
//
// A part imports its own files, the parts of the layers below its own, and, where its layer says
// `peers`, the other parts of its layer. An arrow against the layers is allowed only by an entry
// of `allow`, which says why. A part with `imports` instead of a layer stands outside the server's
// layers and imports exactly those parts. `test/` is imported by none.
import { writeFileSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Bottom to top. */
export const layers = [
  { name: 'contract', about: 'what every side shares and bundles' },
  { name: 'base', about: 'infrastructure and settings, below everything of the server' },
  { name: 'core', about: 'what the areas stand on: storage, calls out, the handler contract' },
  { name: 'domain', peers: true, about: "the areas: each one's repositories, rules and handler factory; areas use each other" },
  { name: 'pipeline', about: 'the one way an operation runs, whatever the binding' },
  { name: 'bindings', peers: true, about: 'translate a protocol to `invoke` and back; MCP and the dashboard reuse parts of HTTP' },
  { name: 'start', peers: true, about: 'composition roots: build everything, hand each part what it uses' },
];

export const parts = [
  { name: 'shared', path: 'shared', layer: 'contract', node: false, holds: 'the operation registry, schemas and record types (the contract)' },
  { name: 'lib', path: 'server/lib', layer: 'base', holds: 'errors, metrics, trace context, logs, the package, and small generic helpers (LRU, backoff, text)' },
  { name: 'config', path: 'server/config.ts', layer: 'base', imports: [], holds: 'every setting read from the environment: a leaf' },
  { name: 'store', path: 'server/store', layer: 'core', holds: 'the storage port, MongoDB and the embedded store' },
  { name: 'outbound', path: 'server/outbound', layer: 'core', holds: 'calling out: client, limiter, breaker, retry, the SSRF guard' },
  { name: 'invocation', path: 'server/invocation', layer: 'core', holds: 'the handler contract: HandlerContext, Caller, Budget, an outcome' },
  ...[
    ['auth', 'API keys, access tokens, members, authorize()'],
    ['credits', 'workspaces (the credit account), plans, the ledger, payment'],
    ['companies', "Brazil's company records, their search and lookup, the release files and changes they are read from"],
    ['receita', "the Receita Federal's releases: their download, their import, the release file's writer"],
    ['people', 'people search over its sources, the people import'],
    ['enrich', 'the cascade and its memory'],
    ['providers', 'one file per data provider, their HTTP client and catalog'],
    ['ai', 'the language model, research, AI columns, web search'],
    ['outreach', 'templates, campaigns, cadences, prospects, the message writer'],
    ['exports', "a company search's exports"],
    ['jobs', 'background jobs, their runner and webhook deliveries'],
    ['watches', "watches on the registry's changes, sent as signed webhooks after each import"],
    ['tools', 'the registry as tools, for the bindings that offer them to a model'],
    ['health', 'the health operation'],
  ].map(([name, holds]) => ({ name, path: `server/${name}`, layer: 'domain', holds })),
  { name: 'pipeline', path: 'server/pipeline', layer: 'pipeline', holds: 'invoke(): scope, validation, plan gate, handler, charges, idempotency' },
  { name: 'http', path: 'server/http', layer: 'bindings', holds: 'the HTTP binding: routes, bodies, OpenAPI, rate limits, SSE' },
  { name: 'mcp', path: 'server/mcp', layer: 'bindings', holds: 'the MCP binding' },
  { name: 'agent', path: 'server/agent', layer: 'bindings', holds: 'the built-in agent: its loop over the tools' },
  { name: 'dashboard', path: 'server/dashboard', layer: 'bindings', holds: 'sign-in, sessions, the /dashboard mount of the registry, its pages' },
  { name: 'dashboard/web', path: 'server/dashboard/web', imports: ['shared'], node: false, holds: 'the dashboard front end, bundled for the browser' },
  { name: 'start', path: 'server/start', layer: 'start', holds: 'config → store → services → handlers → app → listen' },
  { name: 'cli', path: 'server/cli', layer: 'start', holds: '`npx prospecta …`' },
  { name: 'seed', path: 'server/seed', layer: 'start', holds: 'demo data and the synthetic release (tools, not domain)' },
  { name: 'addon', path: 'addon', imports: ['shared'], node: false, holds: 'the Google Sheets add-on: reaches the server over HTTP only' },
];

/** Arrows against the layers, each with its reason: `from` part may import `to` part. */
export const allow = [];

const layerOf = (p) => layers.findIndex((l) => l.name === p.layer);

/** Whether part `a` may import part `b`, by the layers or an allowed arrow. */
export function mayImport(a, b) {
  if (a === b) return true;
  if (allow.some((x) => x.from === a.name && x.to === b.name)) return true;
  if (a.imports) return a.imports.includes(b.name);
  if (b.layer === undefined) return false;
  const [la, lb] = [layerOf(a), layerOf(b)];
  return lb < la || (lb === la && layers[la].peers === true);
}

const isFile = (p) => /\.\w+$/.test(p.path);
/** Parts whose folder lies inside `p`'s. */
const nestedIn = (p) => parts.filter((q) => q !== p && q.path.startsWith(`${p.path}/`));

/** The files of a part, as globs, without the parts nested in it. */
function globs(p) {
  if (isFile(p)) return [p.path];
  const nested = nestedIn(p).map((q) => q.path.slice(p.path.length + 1));
  return nested.length === 0 ? [`${p.path}/**`] : [`${p.path}/*`, `${p.path}/!(${nested.join('|')})/**`];
}

/** The `import-x/no-restricted-paths` zones: for each part, what it may not import. */
export function zones() {
  return parts.flatMap((p) => {
    const denied = parts.filter((q) => !mayImport(p, q));
    const message = `${p.name} (${p.layer ? `layer ${p.layer}` : 'outside the layers'}) may import ${describeAllowed(p)}: see parts.mjs and docs/architecture.md.`;
    // A denied folder holding a part it may import gets a zone of its own, excepting that part.
    const excepted = (q) => nestedIn(q).filter((n) => mayImport(p, n));
    const plain = denied.filter((q) => excepted(q).length === 0);
    return [
      { target: globs(p), from: [...plain.map((q) => q.path), 'test'], message },
      ...denied
        .filter((q) => excepted(q).length > 0)
        .map((q) => ({ target: globs(p), from: q.path, except: excepted(q).map((n) => `./${n.path.slice(q.path.length + 1)}`), message })),
    ];
  });
}

function describeAllowed(p) {
  const names = parts.filter((q) => q !== p && mayImport(p, q)).map((q) => q.name);
  return names.length === 0 ? 'nothing of the tree' : names.join(', ');
}

/** Parts that run outside Node (Apps Script, the browser): no Node module. */
export const withoutNode = parts.filter((p) => p.node === false).map((p) => (isFile(p) ? p.path : `${p.path}/**/*.{ts,tsx}`));

/** The table docs/architecture.md shows, bottom layer first. */
export function partsTable() {
  const rows = ['| layer | part | holds | imports |', '|---|---|---|---|'];
  const place = (p) => (p.layer ? layerOf(p) : layers.length);
  for (const p of [...parts].sort((a, b) => place(a) - place(b))) {
    const peers = p.layer !== undefined && layers[layerOf(p)].peers === true;
    const layer = p.layer ?? 'outside';
    const bottom = p.layer !== undefined && layerOf(p) === 0 && !peers;
    const extra = p.imports ? (p.imports.length ? p.imports.join(', ') : 'nothing of the tree') : bottom ? 'nothing of the tree' : `the layers below${peers ? ' and its own' : ''}`;
    rows.push(`| ${layer} | \`${p.path}${isFile(p) ? '' : '/'}\` | ${p.holds} | ${extra} |`);
  }
  for (const a of allow) rows.push(`| allowed | ${a.from} → ${a.to} | ${a.why} | |`);
  return rows.join('\n');
}

const START = '<!-- parts:start (npm run docs:parts) -->';
const END = '<!-- parts:end -->';

/** The architecture doc with its parts table rewritten from this map. */
export function documented(doc) {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/architecture.md has no ${START} … ${END} block`);
  return `${doc.slice(0, from + START.length)}\n${partsTable()}\n${doc.slice(to)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  const file = new URL('docs/architecture.md', import.meta.url);
  writeFileSync(file, documented(readFileSync(file, 'utf8')));
}
