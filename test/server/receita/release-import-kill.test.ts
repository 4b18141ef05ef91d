/**
 * Issue 41: `prospecta import cnpj` killed with SIGKILL in each phase of an import (per-company
 * files, tax-regime files, establishments, the end where the file is built and switched to): the release in service
 * stays whole (the old one, or the new one once switched, never a mix), and running the import
 * again resumes it and answers exactly what an import never killed answers.
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../../server/companies/registry/registry.ts';
import { importKilledAt as killedAt, importOf as importFrom, releasePair } from '../../helpers/release-imports.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const ESTABLISHMENTS = 3_000;

let releases: string;
beforeAll(async () => {
  releases = await releasePair('kill-releases', ESTABLISHMENTS);
}, 300_000);

const importOf = (dataDir: string, release: string) => importFrom(releases, dataDir, release);
const importKilledAt = (dataDir: string, release: string, line: RegExp) => killedAt(releases, dataDir, release, line);

/** What the release in service answers: every document, in CNPJ order, as the batch writes it. */
function answers(dataDir: string): { release: string; documents: string[] } {
  const registry = new Registry(path.join(dataDir, 'registry'));
  const file = registry.current()!;
  try {
    const cnpjs = file.search({}, 100_000);
    return { release: file.meta.release, documents: [...file.json(cnpjs).values()].map(String) };
  } finally {
    registry.close();
  }
}

describe('an import killed in each phase', () => {
  let clean: { release: string; documents: string[] };
  /** A store with 2026-09 imported and nothing since, which each test copies rather than importing it again. */
  let old: string;
  beforeAll(async () => {
    const dataDir = await tempDir('kill-clean');
    expect((await importOf(dataDir, '2026-10')).code).toBe(0);
    clean = answers(dataDir);
    expect(clean.documents).toHaveLength(ESTABLISHMENTS);
    old = await tempDir('kill-old');
    expect((await importOf(old, '2026-09')).code).toBe(0);
  }, 300_000);

  it.each([
    ['the per-company files', /Socios2\.zip done/],
    // The per-company rows are being gathered by a worker thread beside these files.
    ['the tax-regime files', /Imunes e Isentas\.zip done/],
    ['the establishments', /Estabelecimentos4\.zip done/],
    ['the end (building and switching the file)', /Estabelecimentos9\.zip done/],
  ])('in %s: the release in service stays whole, and the import resumes to the same answers', async (_phase, line) => {
    const dataDir = await tempDir('kill-import');
    await cp(old, dataDir, { recursive: true });
    const before = answers(dataDir);
    expect(before.release).toBe('2026-09');

    expect((await importKilledAt(dataDir, '2026-10', line)).killed).toBe(true);
    const during = answers(dataDir);
    // Old or new, whole: every document of the release named, as many as it has.
    expect(['2026-09', '2026-10']).toContain(during.release);
    expect(during.documents.every((json) => JSON.parse(json).release === during.release)).toBe(true);
    if (during.release === '2026-09') expect(during).toEqual(before);
    else expect(during).toEqual(clean);

    const resumed = await importOf(dataDir, '2026-10');
    expect(resumed.code).toBe(0);
    expect(answers(dataDir)).toEqual(clean);
  }, 300_000);
});
