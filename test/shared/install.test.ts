/**
 * `npm install` carries what the server and the README's commands need, plus the devDependencies,
 * and nothing only a test needs: the MCP conformance suite and the Node 24 it runs on (about
 * 240 MB, issue 43) are installed into test/mcp-conformance/ by the test that needs them, on first
 * need (scripts/install-conformance.mjs), never by an install script of the project.
 *
 * npm 12 runs a dependency's install script only when package.json's `allowScripts` names it (npm
 * 11 warns): better-sqlite3 builds its SQLite binding there, so a newcomer on npm 12 whose install
 * skipped it would meet a server that cannot open its store.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as {
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
  packages?: Record<string, { hasInstallScript?: boolean }>;
};

describe('npm install', () => {
  it('runs no install script beyond the build, and installs none of the conformance suite', () => {
    const project = read('package.json');
    expect(Object.keys(project.scripts ?? {}).filter((name) => /^(pre|post)?install$/.test(name))).toEqual([]);
    expect(project.scripts?.prepare).toBe('node build.mjs');
    const installed = Object.keys({ ...project.dependencies, ...project.devDependencies });
    const suite = Object.keys(read('test/mcp-conformance/package.json').dependencies ?? {});
    expect(suite.length).toBeGreaterThan(0);
    expect(installed.filter((name) => suite.includes(name))).toEqual([]);
  });

  it("names every dependency's install script in allowScripts: the SQLite driver's build runs, telemetry does not", () => {
    const project = read('package.json');
    const withScripts = Object.entries(read('package-lock.json').packages ?? {})
      .filter(([path, entry]) => path !== '' && entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('better-sqlite3');
    expect(Object.keys(project.allowScripts ?? {}).sort()).toEqual([...new Set(withScripts)].sort());
    expect(project.allowScripts?.['better-sqlite3']).toBe(true);
    // swagger-ui-dist's dependency that reports each install to its vendor.
    expect(project.allowScripts?.['@scarf/scarf']).toBe(false);
  });
});
