/**
 * The per-company staging of an import into a release file (receita/import/staging.ts): a root's
 * last company and Simples rows, its partners once per Sócios line in the files' order, and rows
 * a resumed run stages after an earlier run had gathered them (the rest of a file that had ended
 * early) joined all the same.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FileStaging } from '../../../server/receita/import/staging.ts';

function stagingFile() {
  const db = new Database(':memory:');
  db.exec("ATTACH DATABASE ':memory:' AS stage");
  const transaction = (write: () => void) => db.transaction(write)();
  return { db, open: () => new FileStaging(db, transaction) };
}

describe('the staging file of a release import', () => {
  it("keeps a root's last rows and each partner line once, in the files' order", async () => {
    const { open } = stagingFile();
    const staging = open();
    await staging.put([{ root: '11111111', data: { company: 'first' } }, { root: '11111111', data: { simples: 'S' } }]);
    await staging.put([{ root: '11111111', data: { company: 'second' } }]);
    await staging.addPartners([
      { root: '11111111', key: 'socios_1', partner: 'ANA' },
      { root: '11111111', key: 'socios_2', partner: 'BIA' },
      // A resumed run staging a line again.
      { root: '11111111', key: 'socios_1', partner: 'ANA' },
    ]);
    const found = await staging.get(['11111111', '22222222']);
    expect([...found.keys()]).toEqual(['11111111']);
    expect(found.get('11111111')).toEqual({ company: 'second', simples: 'S', partners: ['ANA', 'BIA'] });
  });

  it('joins rows a resumed run staged after an earlier run gathered them', async () => {
    const { open } = stagingFile();
    const first = open();
    await first.put([{ root: '11111111', data: { company: 'kept' } }]);
    await first.addPartners([{ root: '11111111', key: 'socios_1', partner: 'ANA' }]);
    expect(await first.get(['11111111'])).toEqual(new Map([['11111111', { company: 'kept', partners: ['ANA'] }]]));

    const resumed = open();
    await resumed.put([{ root: '22222222', data: { company: 'late' } }, { root: '11111111', data: { simples: 'S' } }]);
    await resumed.addPartners([{ root: '11111111', key: 'socios_9', partner: 'CAIO' }]);
    const found = await resumed.get(['11111111', '22222222']);
    expect(found.get('11111111')).toEqual({ company: 'kept', simples: 'S', partners: ['ANA', 'CAIO'] });
    expect(found.get('22222222')).toEqual({ company: 'late' });
  });
});
