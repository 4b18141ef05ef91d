/**
 * The per-company staging of an import into a release file (receita/import/staging.ts): a root's
 * last company and Simples rows, its partners once per Sócios line in the files' order, and rows
 * a resumed run stages after an earlier run had gathered them (the rest of a file that had ended
 * early) joined all the same.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStaging } from '../../../server/receita/import/staging.ts';
import { ReleaseWriter } from '../../../server/receita/import/release-writer.ts';
import { DocumentThread } from '../../../server/receita/import/document-thread.ts';
import { ThreadStaging } from '../../../server/receita/import/thread-staging.ts';
import { rowsPath } from '../../../server/receita/import/rows-files.ts';
import { stagedPos } from '../../../server/companies/registry/staged-row.ts';
import { DOCUMENT_WORKER } from '../../helpers/import-fixture.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

function stagingFile() {
  const db = new Database(':memory:');
  db.exec("ATTACH DATABASE ':memory:' AS stage");
  const transaction = (write: () => void) => db.transaction(write)();
  return { db, open: () => new FileStaging(db, transaction, () => []) };
}

describe('the staging file of a release import', () => {
  it("keeps a root's last rows and each partner line once, in the files' order", async () => {
    const { open } = stagingFile();
    const staging = open();
    await staging.put([{ root: '11111111', data: { company: 'first' }, pos: 1 }, { root: '11111111', data: { simples: 'S' }, pos: 2 }]);
    await staging.put([{ root: '11111111', data: { company: 'second' }, pos: 3 }]);
    await staging.addPartners([
      { root: '11111111', key: 'socios_1', partner: 'ANA', pos: 10 },
      { root: '11111111', key: 'socios_2', partner: 'BIA', pos: 11 },
      // A resumed run staging a line again.
      { root: '11111111', key: 'socios_1', partner: 'ANA', pos: 10 },
    ]);
    const found = await staging.get(['11111111', '22222222']);
    expect([...found.keys()]).toEqual(['11111111']);
    expect(found.get('11111111')).toEqual({ company: 'second', simples: 'S', partners: ['ANA', 'BIA'] });
  });

  it('gives back partners as staged, whatever they hold but the separators', async () => {
    const { open } = stagingFile();
    const staging = open();
    const partners = ['2\u0001JOSÉ "ZÉ" D\'ÁVILA\u0001***1\\2**', '1\u0001[ANA]\u0001{"x":1}', '2\u0001\u0001'];
    await staging.addPartners(partners.map((partner, i) => ({ root: '11111111', key: `socios_${i}`, partner, pos: i })));
    expect((await staging.get(['11111111'])).get('11111111')).toEqual({ partners });
  });

  it('joins rows a resumed run staged after an earlier run gathered them', async () => {
    const { open } = stagingFile();
    const first = open();
    await first.put([{ root: '11111111', data: { company: 'kept' }, pos: 1 }]);
    await first.addPartners([{ root: '11111111', key: 'socios_1', partner: 'ANA', pos: 10 }]);
    expect(await first.get(['11111111'])).toEqual(new Map([['11111111', { company: 'kept', partners: ['ANA'] }]]));

    const resumed = open();
    await resumed.put([{ root: '22222222', data: { company: 'late' }, pos: 2 }, { root: '11111111', data: { simples: 'S' }, pos: 3 }]);
    await resumed.addPartners([{ root: '11111111', key: 'socios_9', partner: 'CAIO', pos: 19 }]);
    const found = await resumed.get(['11111111', '22222222']);
    expect(found.get('11111111')).toEqual({ company: 'kept', simples: 'S', partners: ['ANA', 'CAIO'] });
    expect(found.get('22222222')).toEqual({ company: 'late' });
  });

  it("gathers the rows worker threads stored in their rows files with the staging file's, by their place in the release", async () => {
    const dir = await tempDir('staging-rows-files');
    const writer = new ReleaseWriter(path.join(dir, '2026-10-test.sqlite'));
    const threads = [0, 1].map((n) => new ThreadStaging(rowsPath(writer.path, n)));
    try {
      const { db, transaction } = writer.stage;
      const staging = new FileStaging(db, transaction, () => writer.attachRows());
      const place = (file: number, line: number) => stagedPos(file, line);
      // Stored in another order than the release's: the later place wins, whichever file holds it, and partners keep the files' order.
      threads[1]!.stageCompanies('empresas', { roots: ['11111111'], texts: ['later'], lines: [3] }, 2);
      await staging.put([{ root: '11111111', data: { company: 'earliest' }, pos: place(1, 9) }]);
      threads[0]!.stageCompanies('empresas', { roots: ['11111111', '22222222'], texts: ['earlier', 'only'], lines: [7, 8] }, 1);
      threads[0]!.stageCompanies('simples', { roots: ['11111111'], texts: ['S'], lines: [1] }, 3);
      threads[1]!.stageCompanies('socios', { roots: ['11111111', '11111111'], texts: ['CAIO', 'DORA'], lines: [1, 2] }, 5);
      threads[0]!.stageCompanies('socios', { roots: ['11111111', '11111111'], texts: ['ANA', 'BIA'], lines: [5, 6] }, 4);
      // A line a resumed run stored again, in the other thread's file.
      threads[1]!.stageCompanies('socios', { roots: ['11111111'], texts: ['ANA'], lines: [5] }, 4);
      const found = await staging.get(['11111111', '22222222']);
      expect(found.get('11111111')).toEqual({ company: 'later', simples: 'S', partners: ['ANA', 'BIA', 'CAIO', 'DORA'] });
      expect(found.get('22222222')).toEqual({ company: 'only' });
    } finally {
      threads.forEach((thread) => thread.close());
      writer.close();
    }
  });

  it('gathered by a worker thread once every per-company file is staged, joins the same, and writes on after', async () => {
    const lookups = { cnaes: new Map(), motivos: new Map(), municipios: new Map(), naturezas: new Map(), paises: new Map(), qualificacoes: new Map() };
    const thread = new DocumentThread(DOCUMENT_WORKER, { lookups, release: '2026-10', run: 'test' }, []);
    const writer = new ReleaseWriter(path.join(await tempDir('staging-beside'), '2026-10-test.sqlite'));
    try {
      const { db, transaction, path: stage, beside } = writer.stage;
      const staging = new FileStaging(db, transaction, () => writer.attachRows(), () => beside(() => thread.gatherStaged(stage, [])));
      const roots = Array.from({ length: 500 }, (_, i) => String(10_000_000 + i));
      await staging.put(roots.map((root, i) => ({ root, data: { company: `C${root}` }, pos: i })));
      await staging.put(roots.filter((_, i) => i % 2 === 0).map((root, i) => ({ root, data: { simples: `S${root}` }, pos: 1000 + i })));
      await staging.addPartners(
        roots.flatMap((root, i) => [
          { root, key: `s_${i}`, partner: `P${root}`, pos: 2000 + 2 * i },
          { root, key: `s_${i}b`, partner: `Q${root}`, pos: 2001 + 2 * i },
        ]),
      );
      staging.staged();
      const found = await staging.get(roots);
      expect(found.size).toBe(500);
      expect(found.get('10000000')).toEqual({ company: 'C10000000', simples: 'S10000000', partners: ['P10000000', 'Q10000000'] });
      expect(found.get('10000001')).toEqual({ company: 'C10000001', partners: ['P10000001', 'Q10000001'] });
      // This connection writes the staging file again once the gathering is done.
      writer.put([[1n, Buffer.from('x'), ...Array.from({ length: 20 }, () => null), 0]]);
      expect(db.prepare('SELECT count(*) FROM stage.rows').pluck().get()).toBe(1);
    } finally {
      writer.close();
      await thread.close();
    }
  });
});
