// The layers of docs/architecture.md, checked: every import-x zone is generated from the parts map
// (parts.mjs), which says which part may import which and why. Only import boundaries are linted:
// the compiler checks types, madge cycles, and no rule here formats or restyles the tree.
// Type-only imports count too: a type is a dependency.
import { defineConfig } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { withoutNode, zones } from './parts.mjs';

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
      'import-x/no-restricted-paths': ['error', { zones: zones(), basePath: import.meta.dirname }],
    },
  },
  {
    // Code that runs outside Node (Apps Script, the browser) imports no Node module.
    files: withoutNode,
    rules: { 'import-x/no-nodejs-modules': 'error' },
  },
);
