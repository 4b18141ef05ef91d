import { readFile, rm, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import yazl from 'yazl';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { Companies } from '../../../server/companies/companies.ts';
import type { CompanyFilters } from '../../../server/companies/search-plan.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { csv, estabelecimento, writeExtracted, writeZip } from '../../helpers/release-files.ts';
import { DOCUMENT_WORKER, importPerTest } from '../../helpers/import-fixture.ts';

const head = makeCnpj('11222333');
const branch = makeCnpj('11222333', '0002');
const alnum = '12ABC34501DE35';
const bakery = makeCnpj('44555666');

const lookups = {
  'F.K03200$Z.D61011.CNAECSV': [
    ['6201501', 'Desenvolvimento de programas de computador sob encomenda'],
    ['4721102', 'Padaria e confeitaria com predominância de revenda'],
  ],
  'F.K03200$Z.D61011.NATJUCSV': [['2062', 'Sociedade Empresária Limitada']],
  'F.K03200$Z.D61011.MUNICCSV': [['7107', 'SAO PAULO'], ['7535', 'CURITIBA']],
  'F.K03200$Z.D61011.QUALSCSV': [['49', 'Sócio-Administrador']],
  'F.K03200$Z.D61011.MOTICSV': [['00', 'SEM MOTIVO']],
  'F.K03200$Z.D61011.PAISCSV': [['105', 'BRASIL']],
};

const empresas = [
  ['11222333', 'ACME SOFTWARE LTDA', '2062', '49', '150000,50', '03', ''],
  ['12ABC345', 'NOVA ERA TECNOLOGIA LTDA', '2062', '49', '1000,00', '01', ''],
  ['44555666', 'PADARIA SÃO JOÃO  LTDA', '2062', '49', '20000,00', '01', ''],
];

const estabelecimentos = [
  estabelecimento(head, { 4: 'ACME', 21: '11', 22: '33334444', 27: 'Contato@Acme.com.br', 12: '4721102' }),
  estabelecimento(branch, { 19: 'PR', 20: '7535', 10: '0', 18: '1310100' }),
  estabelecimento(alnum),
  estabelecimento(bakery, { 11: '4721102', 10: '20240230' }),
];

const imp = importPerTest();
const { run, reopen } = imp;
/**
 * The registry as imported, read as the repository reads it: the embedded store keeps it in the
 * release file in service (issue 41), so `findOne` and `countDocuments` are answered from there.
 */
const companies = () => {
  const repository = new Companies(imp.store);
  const all = async () => {
    const file = repository.registry!.current();
    return file ? file.records(file.search({}, 1_000_000)) : [];
  };
  return {
    findOne: async ({ _id }: { _id: string }) => (await repository.byCnpj([_id])).get(_id) ?? null,
    countDocuments: async (filter: { release?: string } = {}) => (await all()).filter((c) => filter.release === undefined || c.release === filter.release).length,
  };
};
const cnpjsFound = async (filters: CompanyFilters) => (await new Companies(imp.store).search(filters, 100)).companies.map((c) => c.cnpj);

async function writeRelease(overrides: { estabelecimentos?: string[][] } = {}) {
  await writeExtracted(imp.release, {
    ...lookups,
    'K3241.K03200Y0.D61011.EMPRECSV': empresas,
    'K3241.K03200Y0.D61011.ESTABELE': overrides.estabelecimentos ?? estabelecimentos,
    'K3241.K03200Y0.D61011.SOCIOCSV': [
      ['11222333', '2', 'MARIA DE SOUZA', '***123456**', '49', '20150302', '', '***000000**', '', '00', '5'],
      ['11222333', '1', 'HOLDING ACME SA', '33000167000101', '22', '20160101', '', '***000000**', '', '00', '0'],
    ],
    'F.K03200$W.SIMPLES.CSV.D61011': [['44555666', 'S', '20200101', '', 'N', '', '']],
  });
}

describe.each([
  { as: 'by a server, into the documents it holds', bulk: false, worker: false },
  { as: 'bulk loaded, documents built in its own thread', bulk: true, worker: false },
  { as: 'by the CLI, bulk loaded, documents built in worker threads', bulk: true, worker: true },
])('import cnpj $as', ({ bulk, worker }) => {
  beforeEach(async () => {
    imp.documentWorker = worker ? DOCUMENT_WORKER : undefined;
    if (imp.oneShot === bulk) return;
    imp.oneShot = bulk;
    await reopen();
  });

  it('joins each establishment with its company, Simples option, partners and code tables', async () => {
    await writeRelease();
    const summary = await run();
    expect(summary).toMatchObject({ release: '2026-10', complete: true, establishments: 4, companies: 3, partners: 2 });
    expect(imp.problems).toEqual([]);

    const doc = (await companies().findOne({ _id: head }))!;
    expect(doc).toMatchObject({
      cnpj: head,
      root: '11222333',
      name: 'ACME SOFTWARE LTDA',
      tradeName: 'ACME',
      establishment: 'MATRIZ',
      registrationStatus: 'ATIVA',
      openingDate: '2015-03-02',
      mainActivity: { code: '6201501', description: 'Desenvolvimento de programas de computador sob encomenda' },
      secondaryActivities: [{ code: '4721102', description: 'Padaria e confeitaria com predominância de revenda' }],
      legalNature: { code: '2062', description: 'Sociedade Empresária Limitada' },
      capital: 150000.5,
      fiscalSize: '03',
      address: { city: 'SAO PAULO', cityCode: '7107', state: 'SP' },
      phones: ['1133334444'],
      email: 'Contato@Acme.com.br',
      partners: [
        { name: 'MARIA DE SOUZA', document: '***123456**', qualification: 'Sócio-Administrador', since: '2015-03-02' },
        { name: 'HOLDING ACME SA', document: '33000167000101', qualification: null, since: '2016-01-01' },
      ],
      release: '2026-10',
    });
    // Found by every one of its activities and its partners' words.
    expect(await cnpjsFound({ cnaes: ['6201501'] })).toContain(head);
    expect(await cnpjsFound({ cnaes: ['4721102'] })).toContain(head);
    // Partners are the company's: each of its establishments has them.
    expect(await cnpjsFound({ partnerName: 'holding acme sa' })).toEqual([head, branch].sort());
    expect(await cnpjsFound({ partnerName: 'maria souza' })).toEqual([head, branch].sort());

    const other = (await companies().findOne({ _id: branch }))!;
    expect(other).toMatchObject({ establishment: 'FILIAL', openingDate: null, address: { city: 'CURITIBA', zipCode: '01310100' } });
    expect((await companies().findOne({ _id: alnum }))!.name).toBe('NOVA ERA TECNOLOGIA LTDA');
    const padaria = (await companies().findOne({ _id: bakery }))!;
    // Accents decoded from latin1, runs of spaces collapsed, an impossible date (Feb 30) read as null.
    expect(padaria).toMatchObject({ name: 'PADARIA SÃO JOÃO LTDA', simplesOption: true, meiOption: false, openingDate: null });
    expect(await cnpjsFound({ name: 'padaria sao joao ltda' })).toEqual([bakery]);
  });

  it('reports bad lines with file and line number, skips them and goes on', async () => {
    const wrongDigits = head.slice(0, 12) + (head.endsWith('9') ? '0' : '9') + head.slice(13);
    await writeRelease({
      estabelecimentos: [estabelecimentos[0]!, estabelecimentos[1]!.slice(0, 29), estabelecimento(wrongDigits), estabelecimentos[3]!],
    });
    const summary = await run();
    expect(summary.establishments).toBe(2);
    expect(summary.problems.count).toBe(2);
    expect(imp.problems).toEqual([
      { file: 'K3241.K03200Y0.D61011.ESTABELE', line: 2, message: 'expected 30 fields, found 29' },
      { file: 'K3241.K03200Y0.D61011.ESTABELE', line: 3, message: expect.stringContaining('wrong check digits') },
    ]);
    expect(await companies().countDocuments({})).toBe(2);
  });

  it('keeps the later row of a CNPJ listed twice, in its own file or a later one, however the rows were batched', async () => {
    // Batches of 3 rows: the first is written by the importer's thread, the others (with worker
    // threads) each by a thread into a file of its own, so a CNPJ's two rows land in different files, in either order of their rowids.
    const twice = Array.from({ length: 24 }, (_, i) => makeCnpj('11222333', String(i + 3).padStart(4, '0')));
    const row = (cnpj: string, tradeName: string) => estabelecimento(cnpj, { 4: tradeName, 11: tradeName === 'ANTES' ? '4721102' : '6201501' });
    await writeRelease({ estabelecimentos: [...estabelecimentos, ...twice.map((cnpj) => row(cnpj, 'ANTES')), ...twice.slice(0, 8).map((cnpj) => row(cnpj, 'DEPOIS'))] });
    await writeExtracted(imp.release, { 'K3241.K03200Y1.D61011.ESTABELE': [...twice.slice(8).reverse().map((cnpj) => row(cnpj, 'DEPOIS')), row(bakery, 'PADARIA NOVA')] });
    const summary = await run({ batchSize: 3 });
    expect(summary).toMatchObject({ complete: true, establishments: estabelecimentos.length + 2 * twice.length + 1 });
    expect(await companies().countDocuments()).toBe(estabelecimentos.length + twice.length);
    for (const cnpj of twice) expect((await companies().findOne({ _id: cnpj }))?.tradeName).toBe('DEPOIS');
    expect((await companies().findOne({ _id: bakery }))?.tradeName).toBe('PADARIA NOVA');
    // Searched as the documents read: the earlier rows' words and CNAEs are no one's.
    expect(await cnpjsFound({ name: 'depois' })).toHaveLength(twice.length);
    expect(await cnpjsFound({ name: 'antes' })).toEqual([]);
    expect((await cnpjsFound({ cnaes: ['6201501'] })).filter((cnpj) => twice.includes(cnpj))).toHaveLength(twice.length);
    expect((await cnpjsFound({ cnaes: ['4721102'] })).filter((cnpj) => twice.includes(cnpj))).toEqual([]);
  });

  it('decodes a file re-saved as UTF-8 and says so', async () => {
    await writeRelease();
    const file = path.join(imp.release, 'K3241.K03200Y0.D61011.EMPRECSV');
    await writeFile(file, Buffer.from((await readFile(file)).toString('latin1'), 'utf8'));
    await run();
    expect(imp.problems).toEqual([{ file: 'K3241.K03200Y0.D61011.EMPRECSV', message: expect.stringContaining('UTF-8') }]);
    expect((await companies().findOne({ _id: bakery }))!.name).toBe('PADARIA SÃO JOÃO LTDA');
  });

  it('reads a file re-saved as UTF-8 with a byte-order mark from its first row', async () => {
    await writeRelease();
    const file = path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE');
    await writeFile(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), await readFile(file)]));
    expect(await run()).toMatchObject({ complete: true, establishments: 4 });
    expect(imp.problems).toEqual([{ file: 'K3241.K03200Y0.D61011.ESTABELE', message: expect.stringContaining('UTF-8') }]);
    expect((await companies().findOne({ _id: head }))!.tradeName).toBe('ACME');
  });

  it('reads the capital in the forms a re-saved file gives it, and no number from what is not one', async () => {
    await writeRelease();
    const capitals = { '11222333': '150000.50', '12ABC345': '0x1F', '44555666': '1.234.567,89' };
    await writeExtracted(imp.release, { 'K3241.K03200Y0.D61011.EMPRECSV': empresas.map((row) => Object.assign([...row], { 4: capitals[row[0] as keyof typeof capitals] })) });
    await run();
    expect((await companies().findOne({ _id: head }))!.capital).toBe(150000.5);
    expect((await companies().findOne({ _id: alnum }))!.capital).toBeNull();
    expect((await companies().findOne({ _id: bakery }))!.capital).toBe(1234567.89);
  });

  it('reads the published zips, and a truncated one up to the cut without deleting older data', async () => {
    await writeRelease();
    const rows = estabelecimentos.map((r) => r);
    for (const [name, inner] of [
      ['Cnaes.zip', 'F.K03200$Z.D61011.CNAECSV'],
      ['Naturezas.zip', 'F.K03200$Z.D61011.NATJUCSV'],
      ['Municipios.zip', 'F.K03200$Z.D61011.MUNICCSV'],
      ['Empresas0.zip', 'K3241.K03200Y0.D61011.EMPRECSV'],
    ] as const) {
      await writeZip(path.join(imp.release, name), inner, await readFile(path.join(imp.release, inner)));
      await rm(path.join(imp.release, inner));
    }
    await rm(path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE'));
    await writeZip(path.join(imp.release, 'Estabelecimentos0.zip'), 'K3241.K03200Y0.D61011.ESTABELE', csv(rows));
    expect(await run()).toMatchObject({ complete: true, establishments: 4 });

    // A newer release whose second Estabelecimentos zip was cut off mid-way.
    const many = Array.from({ length: 3000 }, (_, i) => estabelecimento(makeCnpj(String(20000000 + i))));
    await writeZip(path.join(imp.release, 'Estabelecimentos1.zip'), 'K3241.K03200Y0.D61111.ESTABELE', csv(many));
    const zip = await readFile(path.join(imp.release, 'Estabelecimentos1.zip'));
    await writeFile(path.join(imp.release, 'Estabelecimentos1.zip'), zip.subarray(0, Math.floor(zip.length / 2)));
    const summary = await run({ release: '2026-11' });
    expect(summary.complete).toBe(false);
    expect(summary.establishments).toBeGreaterThan(4);
    expect(summary.establishments).toBeLessThan(4 + 3000);
    expect(imp.problems.map((p) => p.message)).toEqual([
      expect.stringContaining('damaged zip'),
      expect.stringContaining('the file ends early'),
    ]);
    // Incomplete, so nothing from the older release was removed.
    expect(summary.removed).toBe(0);
  });

  it('names a part or a per-company file missing from a release, and removes nothing for it', async () => {
    const others = [estabelecimento(makeCnpj('20000000')), estabelecimento(makeCnpj('20000001'))];
    await writeRelease();
    await writeExtracted(imp.release, { 'K3241.K03200Y1.D61011.ESTABELE': others });
    expect(await run()).toMatchObject({ complete: true, establishments: 6 });

    // A newer release whose first Estabelecimentos part did not arrive: its establishments are not gone from the registry.
    await rm(path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE'));
    expect(await run({ release: '2026-11' })).toMatchObject({ complete: false, establishments: 2, removed: 0 });
    expect(imp.problems).toEqual([{ file: 'Estabelecimentos0.zip', message: expect.stringContaining('missing') }]);
    expect(await companies().countDocuments({})).toBe(6);

    imp.problems = [];
    await writeRelease();
    await rm(path.join(imp.release, 'K3241.K03200Y0.D61011.SOCIOCSV'));
    expect(await run({ release: '2026-11' })).toMatchObject({ complete: false, removed: 0 });
    expect(imp.problems).toEqual([{ file: 'Socios*.zip', message: expect.stringContaining('missing') }]);
  });

  it('reads a zip holding more than its one CSV as incomplete, naming it, and removes nothing', async () => {
    await writeRelease();
    expect(await run()).toMatchObject({ complete: true, establishments: 4 });
    await rm(path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE'));
    const zip = new yazl.ZipFile();
    zip.addBuffer(csv(estabelecimentos.slice(0, 2)), 'K3241.K03200Y0.D61111.ESTABELE');
    zip.addBuffer(csv(estabelecimentos.slice(2)), 'K3241.K03200Y1.D61111.ESTABELE');
    zip.end();
    await writeFile(path.join(imp.release, 'Estabelecimentos0.zip'), await buffer(zip.outputStream));
    expect(await run({ release: '2026-11' })).toMatchObject({ complete: false, establishments: 2, removed: 0 });
    expect(imp.problems).toEqual([{ file: 'Estabelecimentos0.zip', message: expect.stringContaining('holds 2 files') }]);
    expect(await companies().countDocuments({})).toBe(4);
  });

  it('checks each zip entry against its CRC-32: damaged bytes that still inflate make the import incomplete', async () => {
    await writeRelease();
    expect(await run()).toMatchObject({ complete: true, establishments: 4 });
    await rm(path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE'));
    // Stored, not deflated: a changed byte reads back as text, which only the checksum tells.
    const zip = new yazl.ZipFile();
    zip.addBuffer(csv(estabelecimentos.slice(0, 3)), 'K3241.K03200Y0.D61111.ESTABELE', { compress: false });
    zip.end();
    const bytes = await buffer(zip.outputStream);
    const at = bytes.indexOf('ACME');
    bytes[at] = 'X'.charCodeAt(0);
    await writeFile(path.join(imp.release, 'Estabelecimentos0.zip'), bytes);
    expect(await run({ release: '2026-11' })).toMatchObject({ complete: false, removed: 0 });
    expect(imp.problems).toEqual([{ file: 'Estabelecimentos0.zip', line: expect.any(Number), message: expect.stringContaining('CRC-32') }]);
    expect(await companies().countDocuments({})).toBe(4);
  });

  it('takes a file none of whose lines has the fields of its kind (another file under its name) as unread, and removes nothing', async () => {
    await writeRelease();
    expect(await run()).toMatchObject({ complete: true, establishments: 4 });
    await writeFile(path.join(imp.release, 'K3241.K03200Y0.D61011.ESTABELE'), csv(empresas));
    expect(await run({ release: '2026-11' })).toMatchObject({ complete: false, establishments: 0, removed: 0 });
    expect(imp.problems.at(-1)).toEqual({ file: 'K3241.K03200Y0.D61011.ESTABELE', message: expect.stringContaining('none of its lines has the 30 fields') });
    expect(await companies().countDocuments({})).toBe(4);
  });

  it('runs again without duplicates and removes establishments a newer release no longer has', async () => {
    await writeRelease();
    await run();
    await run();
    expect(await companies().countDocuments({})).toBe(4);
    await writeRelease({ estabelecimentos: estabelecimentos.slice(0, 3) });
    const summary = await run({ release: '2026-11' });
    expect(summary).toMatchObject({ complete: true, establishments: 3, removed: 1 });
    expect(await companies().countDocuments({ release: '2026-11' })).toBe(3);
    expect(await companies().findOne({ _id: bakery })).toBeNull();
  });

  it('resumes an interrupted import where it stopped, with no duplicates and no missing rows', async () => {
    const many = Array.from({ length: 500 }, (_, i) => estabelecimento(makeCnpj('11222333', String(i + 1).padStart(4, '0'))));
    await writeRelease({ estabelecimentos: many });
    let batches = 0;
    await expect(
      run({
        batchSize: 10,
        onProgress: (p) => {
          if (p.phase === 'establishments' && p.establishments > 0 && ++batches === 3) throw new Error('killed');
        },
      }),
    ).rejects.toThrow('killed');
    // Nothing of an unfinished import is in service: it is written beside, switched to at its end.
    expect(await companies().countDocuments({})).toBe(0);

    await reopen();
    const summary = await run({ batchSize: 10 });
    expect(summary.resumed).toBe(true);
    expect(summary.establishments).toBeLessThan(500);
    expect(await companies().countDocuments({})).toBe(500);
    expect((await companies().findOne({ _id: many[499]!.slice(0, 3).join('') }))!.partners).toHaveLength(2);
  });

  it('stages per-company data in a collection when asked (as on MongoDB) and cleans it up', async () => {
    await writeRelease();
    const summary = await run({ staging: 'store' });
    expect(summary.establishments).toBe(4);
    expect((await companies().findOne({ _id: head }))!.partners).toHaveLength(2);
    expect(await imp.store.collection('registry_staging').countDocuments({})).toBe(0);
  });

  it('tells the release from the folder name or the files, or asks for it', async () => {
    await writeRelease();
    // The files say D61011: October 11th of a year ending in 6, the latest not in the future.
    const year = new Date().getUTCFullYear();
    const latest = year - ((year - 6) % 10) - (year % 10 === 6 && new Date().getUTCMonth() < 9 ? 10 : 0);
    await expect(run({ release: undefined })).resolves.toMatchObject({ release: `${latest}-10` });
    await expect(run({ dir: path.join(imp.release, 'missing') })).rejects.toThrow();
  });
});
