/**
 * `prospecta generate cnpj` and `prospecta import cnpj` as real processes: a synthetic release
 * imported whole, an import killed with SIGKILL and finished by a second run, and an import sent
 * to a running server that holds the store, which can search the companies at once.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer, track } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
/**
 * Ten Estabelecimentos files of 500 rows: enough that an import killed after its third file still
 * has most of its work ahead (the kill lands mid-import), small enough that the five imports of
 * this file do not spend their time on volume (bench/ measures that).
 */
const ESTABLISHMENTS = 5_000;
let work: string;
let release: string;

beforeAll(async () => {
  work = await tempDir('import');
  release = path.join(work, '2026-10');
  const generated = await runCli(['generate', 'cnpj', '--dir', release, '--establishments', String(ESTABLISHMENTS), '--seed', '7'], {
    DATA_DIR: path.join(work, 'unused'),
  });
  expect(generated.code, generated.stderr).toBe(0);
  expect(generated.json).toMatchObject({ establishments: ESTABLISHMENTS, files: expect.any(Array) });
  // It writes the release and nothing else: no store is opened, so none is created in DATA_DIR.
  expect(existsSync(path.join(work, 'unused'))).toBe(false);
});

/** Runs an import until `count` files are reported done on stderr, then kills it with SIGKILL. */
function importKilledAfter(count: number, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, ['bin/prospecta.mjs', 'import', 'cnpj', '--dir', release], {
        cwd: root,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      if ((stderr.match(/Estabelecimentos\d\.zip done/g) ?? []).length >= count) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve(stderr) : reject(new Error(`import ended (${code}) before it could be killed:\n${stderr}`)),
    );
  });
}

describe('prospecta import cnpj', () => {
  it('imports a release with progress on stderr and a summary on stdout', async () => {
    const env = { DATA_DIR: path.join(work, 'whole') };
    const result = await runCli(['import', 'cnpj', '--dir', release], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ release: '2026-10', complete: true, establishments: ESTABLISHMENTS, problems: { count: 0 } });
    expect(result.stderr).toContain('Estabelecimentos9.zip done');
  });

  it('finishes a killed import on the next run, with no duplicates and no missing rows', { timeout: 180_000 }, async () => {
    const env = { DATA_DIR: path.join(work, 'killed') };
    await importKilledAfter(3, env);
    const resumed = await runCli(['import', 'cnpj', '--dir', release], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.json).toMatchObject({ resumed: true, complete: true });
    expect(resumed.json.establishments).toBeLessThan(ESTABLISHMENTS);

    const server = await startServer(env);
    try {
      const { json: account } = await runCli(['workspace', 'create', '--name', 'x'], env);
      const search = await fetch(`${server.url}/v1/api/companies/search`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ limit: 20 }),
      });
      expect(search.status).toBe(200);
      const { results } = (await search.json()) as { results: Array<{ cnpj: string }> };
      expect(results).toHaveLength(20);
      expect(new Set(results.map((r) => r.cnpj)).size).toBe(20);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // A second full run of the same release replaces every establishment by its CNPJ.
    const again = await runCli(['import', 'cnpj', '--dir', release], env);
    expect(again.json).toMatchObject({ resumed: false, establishments: ESTABLISHMENTS, removed: 0 });
  });

  it('sends the import to a running server holding the store, which searches it at once', async () => {
    const env = { DATA_DIR: path.join(work, 'served') };
    const server = await startServer(env);
    try {
      const imported = await runCli(['import', 'cnpj', '--dir', path.relative(root, release)], env);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.json).toMatchObject({ establishments: ESTABLISHMENTS, complete: true });
      expect(imported.stderr).toContain('Estabelecimentos0.zip done');
      // The server loaded the demo release first; a complete import replaces it.
      expect(imported.json.removed).toBeGreaterThan(0);
      const { json: account } = await runCli(['workspace', 'create', '--name', 'x'], env);
      const search = await fetch(`${server.url}/v1/api/companies/search`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${account.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ industry: 'padaria', limit: 5 }),
      });
      const body = (await search.json()) as { results: Array<{ mainActivity: { code: string } }>; activities: unknown[] };
      expect(body.activities.length).toBeGreaterThan(0);
      expect(body.results.length).toBeGreaterThan(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('refuses bad usage with a message', async () => {
    const env = { DATA_DIR: path.join(work, 'usage') };
    const missing = await runCli(['import', 'cnpj'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--dir is required');
    const notRelease = await runCli(['import', 'cnpj', '--dir', work], env);
    expect(notRelease.code).toBe(2); // the folder given is the problem: a usage error, said in one line
    expect(notRelease.stderr).toMatch(/^prospecta: .*not a CNPJ release\n/);
    const badMonth = await runCli(['import', 'cnpj', '--dir', release, '--release', '2026-13'], env);
    expect(badMonth.code).toBe(2);
  });
});
