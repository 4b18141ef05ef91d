/**
 * The import's worker thread: it builds and encodes exactly what the importer's own thread
 * would, and a worker that fails fails the writes waiting on it rather than hanging them.
 */
import { describe, expect, it } from 'vitest';
import { encodeDocuments } from '../../../server/store/embedded/bulk-load.ts';
import { DocumentThread } from '../../../server/companies/receita/import/document-thread.ts';
import { companyDocuments, type DocumentContext, type EstablishmentBatch } from '../../../server/companies/receita/import/documents.ts';
import { MemoryStaging } from '../../../server/companies/receita/import/staging.ts';
import { companyIndexes } from '../../../server/companies/companies.ts';
import { Codes, empresa, simples, socio } from '../../../server/companies/receita/import/records.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { estabelecimento } from '../../helpers/release-files.ts';

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
    return { cnpj, fields: estabelecimento(cnpj, { 4: `PADARIA Nº ${i}`, 11: '4721102', 20: '7107' }) };
  });
  const staging = new MemoryStaging();
  const roots = [...new Set(rows.map(({ cnpj }) => cnpj.slice(0, 8)))];
  const codes = new Codes(context.lookups);
  await staging.put(roots.map((root) => ({ root, data: empresa([root, 'PADARIA SÃO JOÃO LTDA', '2062', '49', '1000,00', '01', ''], codes) })));
  await staging.put(roots.map((root) => ({ root, data: simples([root, 'S', '20200101', '', '', '', '']) })));
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
      const built = await Promise.all(batches.map((batch) => thread.build(batch)));
      built.forEach(({ encoded }, i) => expect(encoded).toEqual(encodeDocuments(companyDocuments(batches[i]!, context), indexed)));
      // The search's keys go beside the documents, so a server indexes them without parsing them.
      expect(Object.keys(built[0]!.encoded.fields)).toEqual(indexed);
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
});
