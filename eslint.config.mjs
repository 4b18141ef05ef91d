// The layers of docs/architecture.md, checked: shared ← store ← domain areas ← pipeline ← bindings
// (http, mcp, agent, dashboard), with the add-on and the dashboard's front end outside the server.
// Only import boundaries are linted: the compiler checks types, madge cycles, and no rule here
// formats or restyles the tree. Type-only imports count too: a type is a dependency.
import path from 'node:path';
import { defineConfig } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const BINDINGS = ['server/http', 'server/mcp', 'server/agent', 'server/dashboard'];

// Domain level: the areas, what they share (outbound, store-free helpers) and the server's
// top-level modules other than the composition roots (app, main, bootstrap, handlers), which
// build the bindings and hand each area's handler factory what it uses.
const DOMAIN = [
  'server/{auth,credits,companies,people,enrich,providers,ai,outreach,exports,outbound,lib,seed,health,invocation}/**',
  'server/config.ts',
];

/** Each zone: files matching `target` may not import files under `from` (but `except`). */
const zones = [
  {
    // The contract is bundled into Apps Script and the browser: nothing of the server, add-on or tests.
    target: 'shared/**',
    from: ['server', 'addon', 'test'],
    message: 'shared/ is the contract every side bundles; it imports nothing of the server, the add-on or the tests.',
  },
  {
    // The add-on talks to the server over HTTP only (its client is generated from the registry).
    target: 'addon/**',
    from: ['server', 'test'],
    message: 'The add-on reaches the server over HTTP only; share code through shared/.',
  },
  {
    // The dashboard's front end is bundled for the browser: shared/ and itself, nothing of the server.
    target: 'server/dashboard/web/**',
    from: ['server/**'],
    // A glob exception is matched as written against the absolute path, so it is made absolute.
    except: [path.join(import.meta.dirname, 'server/dashboard/web/**')],
    message: 'The dashboard front end is bundled for the browser; it imports shared/ and web/ only.',
  },
  {
    // The store knows nothing above it: no area, pipeline, binding or composition root.
    target: 'server/store/**',
    from: ['server/!(store|lib)/**', 'server/config.ts'],
    message: 'server/store/ is below every area: it may use shared/ and lib/ only.',
  },
  {
    // No domain module imports a binding: rules live below the bindings, which only translate.
    target: DOMAIN,
    from: BINDINGS,
    message: 'A domain module never imports a binding (http, mcp, agent, dashboard); move the rule down, or the code out of the binding.',
  },
  {
    // Areas write handlers against the contract below the pipeline (server/invocation), never the pipeline.
    target: DOMAIN,
    from: 'server/pipeline',
    message: 'A domain module never imports the pipeline; the handler contract is server/invocation/ (Handler, HandlerContext, Caller, Budget).',
  },
  {
    // The pipeline runs under the bindings and knows none of them.
    target: 'server/pipeline/**',
    from: BINDINGS,
    message: 'The pipeline knows no binding; a binding calls pipeline.invoke.',
  },
];

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**'] },
  {
    files: ['server/**/*.{ts,tsx}', 'shared/**/*.ts', 'addon/**/*.ts'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 'latest', sourceType: 'module' },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createNodeResolver()] },
    // An exception that no longer excepts anything fails the lint, so none outlives its reason.
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones, basePath: import.meta.dirname }],
    },
  },
  {
    // Code that runs outside Node (Apps Script, the browser) imports no Node module.
    files: ['shared/**/*.ts', 'addon/**/*.ts', 'server/dashboard/web/**/*.{ts,tsx}'],
    rules: { 'import-x/no-nodejs-modules': 'error' },
  },
);
