/**
 * Issue 22: every field of the four main files, the tax-regime files and the release's month,
 * imported from hand-made files in the real layout (latin1, every field quoted, `;`, the three
 * spellings of an empty date, alphanumeric CNPJs in every file), as a server imports and as the
 * CLI does (bulk loaded, documents built in worker threads).
 */
import { rename, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import yazl from 'yazl';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { Companies } from '../../../server/companies/companies.ts';
import { OlderReleaseError } from '../../../server/receita/import/importer.ts';
import { ReleaseRefused } from '../../../server/receita/import/release-files.ts';
import { loadedRelease } from '../../../server/companies/releases.ts';
import { makeCnpj } from '../../helpers/companies.ts';
import { csv, estabelecimento, writeExtracted, writeZip } from '../../helpers/release-files.ts';
import { DOCUMENT_WORKER, importPerTest } from '../../helpers/import-fixture.ts';


const head = makeCnpj('11222333');
const alnum = '12ABC34501DE35';
const abroad = makeCnpj('55666777');
const publicBody = makeCnpj('66777888');
/** In the tax-regime files only. */
const noEstablishment = makeCnpj('99888777');

const lookups = {
  'F.K03200$Z.D61011.CNAECSV': [['6201501', 'Desenvolvimento de programas de computador sob encomenda']],
  'F.K03200$Z.D61011.NATJUCSV': [['2062', 'Sociedade Empresária Limitada'], ['1244', 'Município']],
  'F.K03200$Z.D61011.MUNICCSV': [['7107', 'SAO PAULO']],
  'F.K03200$Z.D61011.QUALSCSV': [['49', 'Sócio-Administrador'], ['05', 'Administrador'], ['14', 'Mãe'], ['00', 'Não informada']],
  'F.K03200$Z.D61011.MOTICSV': [['00', 'SEM MOTIVO']],
  'F.K03200$Z.D61011.PAISCSV': [['249', 'ESTADOS UNIDOS'], ['105', 'BRASIL']],
};

const empresas = [
  ['11222333', 'ACME SOFTWARE LTDA', '2062', '49', '150000,50', '03', ''],
  // Porte empty, an unknown qualification code (36, legacy) and an unknown legal nature.
  ['12ABC345', 'NOVA ERA TECNOLOGIA LTDA', '9999', '36', '1000,00', '', ''],
  ['55666777', 'ACME USA LTDA', '2062', '49', '0,00', '07', ''],
  ['66777888', 'MUNICIPIO DE SAO PAULO', '1244', '05', '0,00', '05', 'SÃO PAULO - SP'],
];

const estabelecimentos = [
  estabelecimento(head, {
    21: '11', 22: '33334444', 23: '11', 24: '55556666', 25: '11', 26: '77778888',
    28: 'RECUPERACAO JUDICIAL', 29: '20240115',
  }),
  // The three spellings of an empty date: "", "0", "00000000".
  estabelecimento(alnum, { 6: '', 10: '0', 29: '00000000' }),
  // Abroad, in a country the table has; a motivo (32) and a municipality the tables lack.
  estabelecimento(abroad, { 7: '32', 8: 'MIAMI', 9: '249', 19: 'EX', 20: '9707' }),
  estabelecimento(publicBody, { 9: '367' }),
];

const socios = [
  // A person aged 31 to 40, no representative.
  ['11222333', '2', 'MARIA DE SOUZA', '***123456**', '49', '20150302', '', '***000000**', '', '00', '4'],
  // A minor, represented by her mother.
  ['11222333', '2', 'ANA DE SOUZA', '***654321**', '49', '20200101', '', '***111222**', 'MARIA DE SOUZA', '14', '1'],
  // A company partner with an alphanumeric CNPJ, age band not applicable.
  ['11222333', '1', 'NOVA ERA TECNOLOGIA LTDA', alnum, '22', '0', '', '***000000**', '', '00', '0'],
  // A foreign partner, from a country the table has; and one from a country it lacks.
  ['12ABC345', '3', 'JOHN SMITH', '***999999**', '49', '00000000', '249', '***333444**', 'JOSE DA SILVA', '05', '9'],
  ['12ABC345', '4', 'PIERRE DUBOIS', '***999999**', '49', '', '275', '***000000**', '', '00', '7'],
];

const simples = [
  ['11222333', 'S', '20200101', '00000000', 'N', '0', ''],
  ['12ABC345', 'N', '20070701', '20231231', 'S', '20090701', '20231231'],
];

const HEADER = ['ano', 'cnpj', 'cnpj_da_scp', 'forma_de_tributacao', 'quantidade_de_escrituracoes'];
const masked = (cnpj: string) => cnpj.replace(/^(.{2})(.{3})(.{3})(.{4})(.{2})$/, '$1.$2.$3/$4-$5');
/** Comma-separated with a header, as the tax-regime files are. */
const commaCsv = (rows: string[][]) => Buffer.from([HEADER, ...rows].map((r) => r.join(',')).join('\n') + '\n', 'latin1');

const imp = importPerTest({ folder: 'receita' });
const { run, reopen } = imp;

async function writeRelease(): Promise<void> {
  await writeExtracted(imp.release, {
    ...lookups,
    'K3241.K03200Y0.D61011.EMPRECSV': empresas,
    'K3241.K03200Y0.D61011.ESTABELE': estabelecimentos,
    'K3241.K03200Y0.D61011.SOCIOCSV': socios,
    'F.K03200$W.SIMPLES.CSV.D61011': simples,
  });
  await writeZip(
    path.join(imp.release, 'Lucro Real.zip'),
    'Lucro Real.csv',
    commaCsv([
      ['2023', masked(head), '0', 'LUCRO REAL', '1'],
      ['2023', masked(noEstablishment), '0', 'LUCRO REAL', '1'],
      ['2023', masked(alnum), '0', 'LUCRO REAL/ARBITRADO', '2'],
      ['2023', '11.222.333/0001-00', '0', 'LUCRO REAL', '1'],
    ]),
  );
  // A folder of per-year files in one zip, as Lucro Presumido is published.
  await writeZipEntries(path.join(imp.release, 'Lucro Presumido.zip'), {
    'Lucro Presumido/Lucro Presumido 2021.csv': commaCsv([['2021', masked(head), '0', 'LUCRO PRESUMIDO', '1']]),
    'Lucro Presumido/Lucro Presumido 2022.csv': commaCsv([
      ['2022', masked(head), masked(abroad), 'LUCRO PRESUMIDO', '3'],
      ['2022', masked(alnum), '0', 'LUCRO PRESUMIDO', ''],
    ]),
  });
  await writeZip(
    path.join(imp.release, 'Imunes e Isentas.zip'),
    'Imunes e Isentas.csv',
    commaCsv([['2023', masked(publicBody), '0', 'IMUNE DO IRPJ', '1']]),
  );
}

async function writeZipEntries(file: string, entries: Record<string, Buffer>): Promise<void> {
  const { createWriteStream } = await import('node:fs');
  const zip = new yazl.ZipFile();
  zip.addEmptyDirectory('Lucro Presumido/');
  for (const [name, content] of Object.entries(entries)) zip.addBuffer(content, name);
  zip.end();
  await new Promise<void>((resolve, reject) => {
    zip.outputStream.pipe(createWriteStream(file)).on('finish', resolve).on('error', reject);
  });
}

/** A CNPJ's tax-regime rows in the release in service (an establishment or not). */
const regimeRows = async (cnpj: string) => new Companies(imp.store).registry!.current()!.taxRegimes([cnpj]).get(cnpj)?.length ?? 0;
const lookup = async (cnpj: string) => (await new Companies(imp.store).byCnpj([cnpj])).get(cnpj)!;

describe.each([
  { as: 'by a server, into the documents it holds', bulk: false, worker: false },
  { as: 'by the CLI, bulk loaded, documents built in worker threads', bulk: true, worker: true },
])('import cnpj $as (issue 22)', ({ bulk, worker }) => {
  beforeEach(async () => {
    imp.documentWorker = worker ? DOCUMENT_WORKER : undefined;
    if (imp.oneShot === bulk) return;
    imp.oneShot = bulk;
    await reopen();
  });

  it('gives every field of the four main files, with descriptions from the release or the layout', async () => {
    await writeRelease();
    const summary = await run();
    expect(summary.establishments).toBe(4);

    const acme = await lookup(head);
    expect(acme).toMatchObject({
      size: { code: '03', description: 'EMPRESA DE PEQUENO PORTE' },
      fiscalSize: '03',
      responsibleQualification: { code: '49', description: 'Sócio-Administrador' },
      federativeEntity: null,
      specialSituation: 'RECUPERACAO JUDICIAL',
      specialSituationDate: '2024-01-15',
      phone1: { areaCode: '11', number: '33334444' },
      phone2: { areaCode: '11', number: '55556666' },
      fax: { areaCode: '11', number: '77778888' },
      phones: ['1133334444', '1155556666'],
      foreignCity: null,
      country: null,
      simples: { option: true, since: '2020-01-01', until: null },
      mei: { option: false, since: null, until: null },
      simplesOption: true,
      meiOption: false,
    });
    expect(acme.partners).toEqual([
      {
        name: 'MARIA DE SOUZA', document: '***123456**', qualification: 'Sócio-Administrador', since: '2015-03-02',
        type: { code: '2', description: 'PESSOA FÍSICA' }, qualificationCode: '49', country: null,
        ageBand: { code: '4', description: '31 A 40 ANOS' }, legalRepresentative: null,
      },
      {
        name: 'ANA DE SOUZA', document: '***654321**', qualification: 'Sócio-Administrador', since: '2020-01-01',
        type: { code: '2', description: 'PESSOA FÍSICA' }, qualificationCode: '49', country: null,
        ageBand: { code: '1', description: '0 A 12 ANOS' },
        legalRepresentative: { document: '***111222**', name: 'MARIA DE SOUZA', qualification: { code: '14', description: 'Mãe' } },
      },
      {
        name: 'NOVA ERA TECNOLOGIA LTDA', document: alnum, qualification: null, since: null,
        type: { code: '1', description: 'PESSOA JURÍDICA' }, qualificationCode: '22', country: null,
        ageBand: { code: '0', description: 'NÃO SE APLICA' }, legalRepresentative: null,
      },
    ]);

    const nova = await lookup(alnum);
    expect(nova).toMatchObject({
      size: null,
      legalNature: { code: '9999', description: null },
      responsibleQualification: { code: '36', description: null },
      registrationStatusDate: null,
      openingDate: null,
      specialSituationDate: null,
      simples: { option: false, since: '2007-07-01', until: '2023-12-31' },
      mei: { option: true, since: '2009-07-01', until: '2023-12-31' },
    });
    expect(nova.partners).toMatchObject([
      {
        name: 'JOHN SMITH', since: null, type: { code: '3', description: 'ESTRANGEIRO' },
        country: { code: '249', description: 'ESTADOS UNIDOS' }, ageBand: { code: '9', description: 'MAIOR DE 80 ANOS' },
        legalRepresentative: { document: '***333444**', name: 'JOSE DA SILVA', qualification: { code: '05', description: 'Administrador' } },
      },
      // Codes the tables lack are kept, with a null description.
      { name: 'PIERRE DUBOIS', type: { code: '4', description: null }, country: { code: '275', description: null } },
    ]);

    expect(await lookup(abroad)).toMatchObject({
      size: { code: '07', description: null },
      fiscalSize: null,
      foreignCity: 'MIAMI',
      country: { code: '249', description: 'ESTADOS UNIDOS' },
      registrationStatusReason: { code: '32', description: null },
      address: { state: 'EX', city: 'MIAMI', country: 'ESTADOS UNIDOS' },
      simples: null,
      mei: null,
    });
    expect(await lookup(publicBody)).toMatchObject({
      federativeEntity: 'SÃO PAULO - SP',
      legalNature: { code: '1244', description: 'Município' },
      country: { code: '367', description: null },
    });

    // Counted per table, never dropped.
    expect(summary.unknownCodes).toEqual({
      naturezas: 1,
      // 36 (legacy) in Empresas, 22 of the company partner.
      qualificacoes: 2,
      porte: 1,
      identificador_socio: 1,
      paises: 2,
      motivos: 1,
      municipios: 1,
    });
  });

  it('imports the tax regimes into their own collection, returned with each company by year, and keeps orphans', async () => {
    await writeRelease();
    const summary = await run();
    expect(summary.taxRegimes).toEqual({ rows: 7, withoutEstablishment: 1 });
    expect(imp.problems).toContainEqual({
      file: 'Lucro Real.zip/Lucro Real.csv',
      line: 5,
      message: 'cnpj "11.222.333/0001-00": wrong check digits',
    });

    expect((await lookup(head)).taxRegimes).toEqual([
      { year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 1 },
      { year: 2022, form: 'LUCRO PRESUMIDO', scpCnpj: abroad, bookkeepingEntries: 3 },
      { year: 2021, form: 'LUCRO PRESUMIDO', scpCnpj: null, bookkeepingEntries: 1 },
    ]);
    expect((await lookup(alnum)).taxRegimes).toEqual([
      { year: 2023, form: 'LUCRO REAL/ARBITRADO', scpCnpj: null, bookkeepingEntries: 2 },
      { year: 2022, form: 'LUCRO PRESUMIDO', scpCnpj: null, bookkeepingEntries: null },
    ]);
    expect((await lookup(abroad)).taxRegimes).toEqual([]);
    // A row whose CNPJ has no establishment is kept for later joins.
    expect(await regimeRows(noEstablishment)).toBe(1);

    // Search keys for the taxRegime filter.
    const companies = new Companies(imp.store);
    const found = async (regime: string, year?: number) =>
      (await companies.search({ taxRegime: { regime, ...(year ? { year } : {}) } } as never, 10)).companies.map((c) => c.cnpj);
    expect(await found('lucro_real')).toEqual([head, alnum].sort());
    expect(await found('lucro_arbitrado', 2023)).toEqual([alnum]);
    expect(await found('lucro_presumido', 2021)).toEqual([head]);
    expect(await found('imune')).toEqual([publicBody]);
    expect(await found('isenta')).toEqual([]);
  });

  it('reads a tax-regime zip whose entry names a path outside it as a damaged file, not a failed import', async () => {
    await writeRelease();
    const zip = new yazl.ZipFile();
    zip.addBuffer(csv([['2023', '11.222.333/0001-81', '', 'LUCRO REAL', '1']]), 'XX/Lucro Real.csv');
    zip.end();
    const bytes = Buffer.from((await buffer(zip.outputStream)).toString('latin1').replaceAll('XX/Lucro', '../Lucro'), 'latin1');
    await writeFile(path.join(imp.release, 'Lucro Real.zip'), bytes);
    const summary = await run();
    expect(summary).toMatchObject({ complete: false, establishments: estabelecimentos.length });
    expect(imp.problems).toContainEqual({ file: 'Lucro Real.zip', message: expect.stringContaining('../Lucro Real.csv') });
  });

  it('replaces the tax regimes with a newer release that has them read whole, and keeps them otherwise', async () => {
    await writeRelease();
    await run();
    await rename(path.join(imp.release, 'Imunes e Isentas.zip'), path.join(imp.release, 'gone.bak'));
    await run({ release: '2026-11' });
    expect(await regimeRows(publicBody)).toBe(0);
    expect(await regimeRows(head)).toBe(3);
  });
});

describe('the release month and release tracking', () => {
  beforeEach(async () => {
    imp.documentWorker = undefined;
    if (!imp.oneShot) return;
    imp.oneShot = false;
    await reopen();
  });

  it('reads the month from a folder that only holds it, and says where it read it', async () => {
    const named = path.join(path.dirname(imp.release), 'dados_abertos_cnpj_2026-09');
    await rename(imp.release, named);
    imp.release = named;
    await writeRelease();
    await expect(run({ release: undefined })).resolves.toMatchObject({
      release: '2026-09',
      releaseFrom: 'the folder name "dados_abertos_cnpj_2026-09"',
    });
  });

  it('reads the month from the extraction date the inner file names carry, and says so', async () => {
    await writeRelease();
    const summary = await run({ release: undefined });
    expect(summary.release).toMatch(/^20\d6-10$/);
    expect(summary.releaseFrom).toMatch(/^the extraction date D61011 in the file name "F\.K03200\$Z\.D61011\.CNAECSV" \(20\d6-10-11\)$/);
  });

  it('tracks the loaded release, and asks for force before an older one goes over it', async () => {
    await writeRelease();
    expect(await loadedRelease(imp.store)).toBeNull();
    await run({ release: '2026-10' });
    expect(await loadedRelease(imp.store)).toMatchObject({ release: '2026-10', complete: true, synthetic: false });
    await expect(run({ release: '2026-09' })).rejects.toThrow(OlderReleaseError);
    await expect(run({ release: '2026-09' })).rejects.toThrow(
      'release 2026-09 (read from --release) is older than the loaded release 2026-10; pass --force to import it over it',
    );
    await expect(run({ release: '2026-09', force: true })).resolves.toMatchObject({ release: '2026-09', complete: true });
    expect(await loadedRelease(imp.store)).toMatchObject({ release: '2026-09' });
  });

  it('refuses a release month after this one, which would hold every real release after it back as older', async () => {
    const named = path.join(path.dirname(imp.release), '2099-01');
    await rename(imp.release, named);
    imp.release = named;
    await writeRelease();
    const thisMonth = new Date().toISOString().slice(0, 7);
    await expect(run({ release: undefined })).rejects.toThrow(`release 2099-01 (read from the folder name "2099-01") is after this month, ${thisMonth}`);
    await expect(run({ release: '2099-01' })).rejects.toThrow(ReleaseRefused);
    expect(await loadedRelease(imp.store)).toBeNull();
  });

  it('lets a real release of any month replace the demo data', async () => {
    await writeRelease();
    await run({ release: '2026-10', synthetic: true });
    await expect(run({ release: '2026-04' })).resolves.toMatchObject({ release: '2026-04' });
  });

  it('a real import of the demo’s month is real: an older release over it then needs --force', async () => {
    await writeRelease();
    await run({ release: '2026-10', synthetic: true });
    await run({ release: '2026-10' });
    expect(await loadedRelease(imp.store)).toMatchObject({ release: '2026-10', synthetic: false });
    await expect(run({ release: '2026-09' })).rejects.toThrow(OlderReleaseError);
  });
});
