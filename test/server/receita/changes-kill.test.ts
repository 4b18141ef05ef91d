/**
 * Issue 42: `prospecta import cnpj` killed with SIGKILL while it records the changes of a newer
 * release (its progress line has begun counting them): run again, it resumes, and the change
 * history holds exactly what an import never killed records, nothing twice and nothing lost.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, expect, it } from 'vitest';
import { changeFilePath } from '../../../server/companies/changes/change-file.ts';
import { Registry } from '../../../server/companies/registry/registry.ts';
import { importKilledAt, importOf as importFrom, releasePair } from '../../helpers/release-imports.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ESTABLISHMENTS = 1_500;

let releases: string;
beforeAll(async () => {
  releases = await releasePair('changes-kill', ESTABLISHMENTS);
}, 300_000);

const importOf = (dataDir: string, release: string) => importFrom(releases, dataDir, release);

/** Every change recorded, in key order, and the comparison's counts. */
function history(dataDir: string) {
  const db = new Database(changeFilePath(path.join(dataDir, 'registry')), { readonly: true });
  try {
    return {
      changes: db.prepare('SELECT release, previous, k, kind, body FROM change ORDER BY release, k, kind').raw().all(),
      comparisons: db.prepare('SELECT release, previous, counts FROM comparison').raw().all() as Array<[string, string, string]>,
    };
  } finally {
    db.close();
  }
}

it('resumes the comparison after a kill during it, recording each change once', async () => {
  const [base, clean, cut] = [await tempDir('changes-base'), await tempDir('changes-clean'), await tempDir('changes-cut')];
  expect((await importOf(base, '2026-09')).code).toBe(0);
  // Both start from the same first release (a copy of the data directory no process holds).
  for (const dataDir of [clean, cut]) await cp(base, dataDir, { recursive: true });
  const finished = await importOf(clean, '2026-10');
  expect(finished.code).toBe(0);
  const expected = history(clean);
  expect(expected.changes.length).toBeGreaterThan(1_000);

  // Killed once its progress line counts changes.
  expect((await importKilledAt(releases, cut, '2026-10', /^changes: /m)).killed).toBe(true);
  // Killed within the comparison: the first release still in service, and nothing of its step kept.
  const registry = new Registry(path.join(cut, 'registry'));
  expect(registry.meta()?.release).toBe('2026-09');
  registry.close();
  expect(history(cut).changes).toEqual([]);
  const resumed = await importOf(cut, '2026-10');
  expect(resumed.code, resumed.stderr).toBe(0);
  const summary = JSON.parse(resumed.stdout) as { changes: Record<string, number> };
  const got = history(cut);
  expect(got.changes).toEqual(expected.changes);
  expect(got.comparisons.map(([release, previous]) => [release, previous])).toEqual([['2026-10', '2026-09']]);
  expect(Object.values(summary.changes).reduce((a, b) => a + b, 0)).toBe(expected.changes.length);
}, 300_000);
