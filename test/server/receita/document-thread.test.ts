/**
 * The import's worker thread: it stages the per-company files and builds and encodes the
 * documents exactly as the importer's own thread would, and a worker that fails fails the writes
 * waiting on it rather than hanging them.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeDocuments, encodeUntaggedDocuments } from '../../../server/store/embedded/bulk-load.ts';
import { DocumentThread, type Built } from '../../../server/receita/import/document-thread.ts';
import { companyDocuments, type DocumentContext, type EstablishmentBatch } from '../../../server/receita/import/documents.ts';
import { MemoryStaging } from '../../../server/receita/import/staging.ts';
import { companyIndexes } from '../../../server/companies/companies.ts';
import { Codes, empresa, simples, socio } from '../../../server/receita/import/records.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { csv, estabelecimento } from '../../helpers/release-files.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import type { ReleaseFile } from '../../../server/receita/import/release-files.ts';
import { readRowBatches, openReleaseFile, type Problem } from '../../../server/receita/import/rows.ts';
import { rowLayoutOf } from '../../../server/receita/import/row-layout.ts';
import { stageRows, type StagedRows } from '../../../server/receita/import/staged-rows.ts';

const WORKER = new URL('../../../dist/document-worker.mjs', import.meta.url);

const context: DocumentContext = {
  lookups: {
    cnaes: new Map([['4721102', 'Padaria e confeitaria']]),
    motivos: new Map(),
    municipios: new Map([['7107', 'SÃO PAULO']]),
    naturezas: new Map([['2062', 'Sociedade Empresária Limitada']]),
    paises: new Map(),
    qualificacoes: new Map(),
  },
  release: '2026-10',
  run: 'run-1',
};

/** Establishments of seven roots, staged in memory as the importer stages them. */
async function batchOf(count: number): Promise<EstablishmentBatch> {
  const rows = Array.from({ length: count }, (_, i) => {
    const cnpj = makeCnpj(String(10_000_000 + (i % 7)), String(i + 1).padStart(4, '0'));
    return { cnpj, pos: i, fields: estabelecimento(cnpj, { 4: `PADARIA Nº ${i}`, 11: '4721102', 20: '7107' }) };
  });
  const staging = new MemoryStaging();
  const roots = [...new Set(rows.map(({ cnpj }) => cnpj.slice(0, 8)))];
  const codes = new Codes(context.lookups);
  await staging.put(roots.map((root) => ({ root, data: { company: empresa([root, 'PADARIA SÃO JOÃO LTDA', '2062', '49', '1000,00', '01', ''], codes) } })));
  await staging.put(roots.map((root) => ({ root, data: { simples: simples([root, 'S', '20200101', '', '', '', '']) } })));
  const partner = (name: string) => socio([roots[0]!, '2', name, '***123456**', '49', '', '', '***000000**', '', '00', '4'], codes);
  await staging.addPartners(roots.flatMap((root) => [{ root, key: 'a', partner: partner('MARIA DA SILVA') }, { root, key: 'b', partner: partner('JOSÉ') }]));
  return { rows, roots: await staging.get(roots), taxRegimes: new Map([[rows[0]!.cnpj, ['lucro_real', 'lucro_real:2024']]]) };
}

describe('the document worker thread', () => {
  it('gives the bytes the importer would encode itself, batch after batch, in order', async () => {
    const indexed = companyIndexes.map((declaration) => Object.keys(declaration.keys)[0]!).filter((field) => field !== '_id');
    const thread = new DocumentThread(WORKER, context, indexed);
    try {
      const batches = await Promise.all([batchOf(300), batchOf(1), batchOf(50)]);
      const built = (await Promise.all(batches.map((batch) => thread.build(batch)))) as Array<Extract<Built, { encoded: unknown }>>;
      built.forEach(({ encoded }, i) => expect(encoded).toEqual(encodeDocuments(companyDocuments(batches[i]!, context), indexed)));
      expect(JSON.parse(`[${Buffer.from(built[1]!.encoded.bytes).toString()}]`)[0]).toMatchObject({
        name: 'PADARIA SÃO JOÃO LTDA',
        simplesOption: true,
        meiOption: null,
        mainActivity: { code: '4721102', description: 'Padaria e confeitaria' },
        simples: { option: true, since: '2020-01-01', until: null },
        partners: [{ name: 'MARIA DA SILVA', ageBand: { code: '4', description: '31 A 40 ANOS' } }, { name: 'JOSÉ' }],
        importRun: 'run-1',
      });
    } finally {
      await thread.close();
    }
  });

  it('fails the batches waiting on a worker that dies, and every later one', async () => {
    const thread = new DocumentThread(new URL('data:text/javascript,process.exit(3)'), context, []);
    await expect(thread.build(await batchOf(2))).rejects.toThrow('the document worker exited (code 3)');
    await expect(thread.build(await batchOf(2))).rejects.toThrow('exited (code 3)');
    await thread.close();
  });

  it('stages a per-company file as the importer itself does, from the row it is told to start at', async () => {
    const dir = await tempDir('staged');
    // Odd rows as real releases have them: a bad root, a short row, accents in Latin-1, quotes, empty fields, unknown codes.
    const rows = [
      ['11222333', 'ACME SOFTWARE LTDA', '2062', '49', '150000,50', '03', ''],
      ['1122233', 'A SHORT ROOT', '2062', '49', '1,00', '01', ''],
      ['44555666', 'PADARIA SÃO JOÃO  LTDA', '9999', '', '', '', ''],
      ['44555667', 'FIRMA'],
      ...Array.from({ length: 3000 }, (_, i) => [String(50_000_000 + i), `EMPRESA "${i}" ÇÃ`, '2062', '77', 'abc', '05', 'SP']),
    ];
    const name = 'K3241.K03200Y0.D61011.EMPRECSV';
    const bytes = csv(rows);
    await writeFile(path.join(dir, name), bytes);
    const file: ReleaseFile = { kind: 'empresas', name, path: path.join(dir, name), zipped: false, size: bytes.length };
    const onMain = async (skip: number) => {
      const problems: Problem[] = [];
      const unknown = {};
      const staged: StagedRows = { roots: [], texts: [], lines: [] };
      const opened = (await openReleaseFile(file, (p) => problems.push(p)))!;
      const { columns, layout } = rowLayoutOf('empresas');
      let seen = 0;
      for await (const block of readRowBatches(opened.stream, file, columns, (p) => problems.push(p), layout)) {
        const fresh = block.filter(() => ++seen > skip);
        const some = stageRows('empresas', file.name, fresh, new Codes(context.lookups, unknown), (p) => problems.push(p));
        staged.roots.push(...some.roots);
        staged.texts.push(...some.texts);
        staged.lines.push(...some.lines);
      }
      return { staged, problems, unknown, rows: seen };
    };
    const thread = new DocumentThread(WORKER, context, []);
    try {
      for (const skip of [0, 2, 1500]) {
        const read = thread.stage(file, skip);
        const problems: Problem[] = [];
        const unknown: Record<string, number> = {};
        const staged: StagedRows = { roots: [], texts: [], lines: [] };
        let seen = 0;
        for await (const block of read) {
          problems.push(...block.problems);
          for (const [table, count] of Object.entries(block.unknown)) unknown[table] = (unknown[table] ?? 0) + count;
          if ('stored' in block) throw new Error('staged without `into`, the rows come back');
          staged.roots.push(...block.roots);
          staged.texts.push(...block.texts);
          staged.lines.push(...block.lines);
          seen += block.rows;
        }
        problems.push(...read.ended.problems);
        expect(read.ended).toMatchObject({ opened: true, ended: true });
        expect({ staged, problems, unknown, rows: seen }).toEqual(await onMain(skip));
      }
      expect((await onMain(0)).problems.map((p) => p.line)).toEqual([4, 2]);
      expect((await onMain(0)).unknown).toEqual({ naturezas: 1, qualificacoes: 3001 });
    } finally {
      await thread.close();
    }
  });

  it('encodes the documents it builds untagged, to the bytes the tagged encoding gives, whatever the rows hold', async () => {
    const batch = await batchOf(40);
    // Values a careless parse could turn into a Date, NaN or Infinity (which plain JSON would write as null).
    const odd = ['1e400', 'NaN', '-1,00', 'Infinity', '0x10', '', '99999999999999999999999999,99', '1.000,00'];
    batch.rows = batch.rows.map((row, i) => {
      const fields = estabelecimento(row.cnpj, {
        4: i % 2 ? 'NOME "COM" ASPAS \\ Ç' : '',
        6: ['00000000', '20240230', '99999999', 'abc'][i % 4]!,
        10: ['0', '', '18000101', '21001231'][i % 4]!,
        11: i % 3 ? '' : 'x',
        13: '\u0001\t',
        21: 'ab',
        22: '12-34',
        27: 'A@B.C',
      });
      return { cnpj: row.cnpj, pos: i, fields };
    });
    // Each odd value in turn as the capital (the company's fourth field after its root).
    for (const [i, value] of odd.entries()) {
      const root = [...batch.roots.values()][i % batch.roots.size]!;
      root.company = root.company!.split('\u0001').map((field, k) => (k === 3 ? value : field)).join('\u0001');
      const docs = [...companyDocuments(batch, context)];
      expect(Buffer.from(encodeUntaggedDocuments(docs).bytes).toString()).toBe(Buffer.from(encodeDocuments(docs).bytes).toString());
      // The indexed values kept beside them too.
      const indexed = companyIndexes.map((declaration) => Object.keys(declaration.keys)[0]!).filter((field) => field !== '_id');
      expect(encodeUntaggedDocuments(docs, indexed).keys).toBe(encodeDocuments(docs, indexed).keys);
    }
  });
});
