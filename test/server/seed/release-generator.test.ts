import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import Papa from 'papaparse';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkCnpj } from '../../../shared/cnpj.ts';
import {
  CNAE_SUBCLASSES,
  COUNTRIES,
  LEGAL_NATURES,
  MUNICIPALITIES,
  PARTNER_QUALIFICATIONS,
  REGISTRATION_REASONS,
  type CodeTableEntry,
} from '../../../server/seed/code-tables.ts';
import { generateRelease, type GeneratedRelease } from '../../../server/seed/release-generator.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { unzip, type Entry } from '../../helpers/zip.ts';

const ESTABLISHMENTS = 3000;
const SEED = 7;
const PARTS = [...Array(10).keys()];
const LOOKUPS = ['Cnaes', 'Motivos', 'Municipios', 'Naturezas', 'Paises', 'Qualificacoes'];
const MAIN_ZIPS = [
  ...['Empresas', 'Estabelecimentos', 'Socios'].flatMap((kind) => PARTS.map((part) => `${kind}${part}.zip`)),
  'Simples.zip',
  ...LOOKUPS.map((kind) => `${kind}.zip`),
];
/** Published apart, in their own layout (issue 22). */
const TAX_REGIMES = ['Lucro Real', 'Lucro Presumido', 'Lucro Arbitrado', 'Imunes e Isentas'];
const ZIPS = [...MAIN_ZIPS, ...TAX_REGIMES.map((name) => `${name}.zip`)];
const INNER_NAMES: Record<string, RegExp> = {
  Empresas: /^K3241\.K03200Y(\d)\.D61011\.EMPRECSV$/,
  Estabelecimentos: /^K3241\.K03200Y(\d)\.D61011\.ESTABELE$/,
  Socios: /^K3241\.K03200Y(\d)\.D61011\.SOCIOCSV$/,
  Simples: /^F\.K03200\$W\.SIMPLES\.CSV\.D61011$/,
  Cnaes: /^F\.K03200\$Z\.D61011\.CNAECSV$/,
  Motivos: /^F\.K03200\$Z\.D61011\.MOTICSV$/,
  Municipios: /^F\.K03200\$Z\.D61011\.MUNICCSV$/,
  Naturezas: /^F\.K03200\$Z\.D61011\.NATJUCSV$/,
  Paises: /^F\.K03200\$Z\.D61011\.PAISCSV$/,
  Qualificacoes: /^F\.K03200\$Z\.D61011\.QUALSCSV$/,
  ...Object.fromEntries(TAX_REGIMES.map((name) => [name, new RegExp(`^${name}\\.csv$`)])),
};
const COLUMNS: Record<string, number> = { Empresas: 7, Estabelecimentos: 30, Socios: 11, Simples: 7 };
const QUOTED_LINE = /^"[^"]*"(;"[^"]*")*$/;

const kindOf = (zip: string) => zip.replace(/\d*\.zip$/, '');
const parse = (bytes: Buffer) =>
  Papa.parse<string[]>(bytes.toString('latin1'), { delimiter: ';', skipEmptyLines: true }).data;

let workDir: string;
let release: GeneratedRelease;
/** The one entry of each zip, by zip name. */
const entries = new Map<string, Entry>();
const parsed = new Map<string, string[][]>();
/** All rows of a kind of file, across its parts. */
function rows(kind: string): string[][] {
  if (!parsed.has(kind)) {
    parsed.set(kind, ZIPS.filter((zip) => kindOf(zip) === kind).flatMap((zip) => parse(entries.get(zip)!.bytes)));
  }
  return parsed.get(kind)!;
}
const codes = (kind: string) => new Set(rows(kind).map((row) => row[0]));

beforeAll(async () => {
  workDir = await tempDir('generator');
  release = await generateRelease({ dir: path.join(workDir, 'zip'), establishments: ESTABLISHMENTS, seed: SEED });
  for (const file of release.files) {
    const [entry, ...more] = await unzip(file);
    expect(more).toEqual([]);
    entries.set(path.basename(file), entry!);
  }
});

describe('generateRelease', () => {
  it('writes the 37 published zips, each holding one CSV under its legacy name, and the 4 tax-regime zips', async () => {
    expect(release.files.map((file) => path.basename(file))).toEqual(ZIPS);
    expect((await readdir(path.join(workDir, 'zip'))).sort()).toEqual([...ZIPS].sort());
    for (const zip of ZIPS) {
      const match = INNER_NAMES[kindOf(zip)]!.exec(entries.get(zip)!.name);
      expect(match, zip).not.toBeNull();
      if (match?.[1]) expect(zip).toBe(`${kindOf(zip)}${match[1]}.zip`);
    }
  });

  it('writes headerless latin1 rows with every field quoted and LF line ends', () => {
    for (const zip of MAIN_ZIPS) {
      const { bytes } = entries.get(zip)!;
      expect(bytes.includes('\r'), zip).toBe(false);
      expect(bytes.at(-1), zip).toBe(0x0a);
      const lines = bytes.toString('latin1').slice(0, -1).split('\n');
      expect(lines.every((line) => QUOTED_LINE.test(line)), zip).toBe(true);
      const width = COLUMNS[kindOf(zip)] ?? 2;
      expect(parse(bytes).every((row) => row.length === width), zip).toBe(true);
    }
    // "ç" is the single byte 0xE7, not UTF-8's two, and every table reads back exactly.
    const cnaes = entries.get('Cnaes.zip')!.bytes;
    expect(cnaes.includes(0xe7)).toBe(true);
    expect(parse(cnaes)).toContainEqual(['4721102', 'Padaria e confeitaria com predominância de revenda']);
    const tables: Record<string, readonly CodeTableEntry[]> = {
      Cnaes: CNAE_SUBCLASSES,
      Motivos: REGISTRATION_REASONS,
      Municipios: MUNICIPALITIES.map((city) => ({ code: city.code, description: city.name })),
      Naturezas: LEGAL_NATURES,
      Paises: COUNTRIES,
      Qualificacoes: PARTNER_QUALIFICATIONS,
    };
    for (const [kind, table] of Object.entries(tables)) {
      expect(parse(entries.get(`${kind}.zip`)!.bytes)).toEqual(table.map((entry) => [entry.code, entry.description]));
    }
  });

  it('writes the tax-regime files in their layout: a header, masked CNPJs of head offices outside the Simples', () => {
    const simples = new Map(rows('Simples').map((row) => [row[0], row[1]]));
    const roots = codes('Empresas');
    const establishments = new Set(rows('Estabelecimentos').map((row) => row[0]! + row[1] + row[2]));
    let total = 0;
    let orphans = 0;
    for (const name of TAX_REGIMES) {
      const lines = entries.get(`${name}.zip`)!.bytes.toString('latin1').trimEnd().split('\n');
      expect(lines[0]).toBe('ano,cnpj,cnpj_da_scp,forma_de_tributacao,quantidade_de_escrituracoes');
      for (const line of lines.slice(1)) {
        const [year, masked, scp, form, entriesCount] = line.split(',');
        expect(Number(year)).toBeGreaterThanOrEqual(1967);
        expect(masked).toMatch(/^[0-9A-Z]{2}\.[0-9A-Z]{3}\.[0-9A-Z]{3}\/[0-9A-Z]{4}-\d{2}$/);
        const check = checkCnpj(masked!);
        expect(check.status).toBe('valid');
        const cnpj = (check as { cnpj: string }).cnpj;
        expect(roots.has(cnpj.slice(0, 8))).toBe(true);
        expect(simples.get(cnpj.slice(0, 8))).not.toBe('S');
        if (!establishments.has(cnpj)) orphans++;
        expect(scp).toBe('0');
        expect(Number(entriesCount)).toBeGreaterThan(0);
        expect(name === 'Imunes e Isentas' ? /^(IMUNE|ISENTA) DO IRPJ$/ : new RegExp(`^${name.toUpperCase()}$`)).toSatisfy(
          (pattern: RegExp) => pattern.test(form!),
        );
        total++;
      }
    }
    expect(total).toBe(release.taxRegimes);
    expect(total).toBeGreaterThan(ESTABLISHMENTS / 20);
    expect(orphans).toBeGreaterThan(0);
    expect(orphans).toBeLessThan(total / 20);
  });

  it('reports the counts it wrote', () => {
    expect(release.establishments).toBe(ESTABLISHMENTS);
    expect(rows('Estabelecimentos')).toHaveLength(ESTABLISHMENTS);
    expect(rows('Empresas')).toHaveLength(release.companies);
    expect(rows('Socios')).toHaveLength(release.partners);
    expect(rows('Simples')).toHaveLength(release.simples);
    expect(release.companies).toBeLessThan(ESTABLISHMENTS);
    expect(release.partners).toBeGreaterThan(0);
    expect(release.simples).toBeGreaterThan(0);
  });

  it('gives every establishment a valid CNPJ whose root is one company, some alphanumeric', () => {
    const establishments = rows('Estabelecimentos');
    const cnpjs = establishments.map(([root, order, dv]) => `${root}${order}${dv}`);
    expect(cnpjs.every((cnpj) => checkCnpj(cnpj).status === 'valid')).toBe(true);
    expect(new Set(cnpjs).size).toBe(cnpjs.length);
    expect(cnpjs.some((cnpj) => /[A-Z]/.test(cnpj.slice(0, 8)))).toBe(true);
    expect(cnpjs.some((cnpj) => /[A-Z]/.test(cnpj.slice(8, 12)))).toBe(true);

    const companyRoots = rows('Empresas').map((row) => row[0]);
    expect(new Set(companyRoots).size).toBe(companyRoots.length);
    expect(new Set(establishments.map((row) => row[0]))).toEqual(new Set(companyRoots));
    const heads = establishments.filter((row) => row[3] === '1');
    expect(heads).toHaveLength(companyRoots.length);
    expect(heads.every((row) => row[1] === '0001')).toBe(true);
    expect(establishments.filter((row) => row[3] === '2').every((row) => row[1] !== '0001')).toBe(true);
  });

  it('fills codes that exist in the lookup tables', () => {
    const cnaes = codes('Cnaes');
    const countries = codes('Paises');
    const reasons = codes('Motivos');
    const municipalities = new Map(rows('Municipios').map(([code, name]) => [code, name]));
    const establishments = rows('Estabelecimentos');
    for (const row of establishments) {
      expect(cnaes.has(row[11]), row[11]).toBe(true);
      for (const code of row[12] ? row[12].split(',') : []) expect(cnaes.has(code), code).toBe(true);
      expect(municipalities.has(row[20]!), row[20]).toBe(true);
      expect(row[19] === 'EX').toBe(municipalities.get(row[20]!) === 'EXTERIOR');
      if (row[19] === 'EX') expect(row[8] && row[9]).toBeTruthy();
      if (row[9]) expect(countries.has(row[9])).toBe(true);
      expect(reasons.has(row[7]), row[7]).toBe(true);
    }
    expect(establishments.some((row) => row[19] === 'SP' && row[20] === '7107')).toBe(true);

    const natures = codes('Naturezas');
    const qualifications = codes('Qualificacoes');
    const roots = codes('Empresas');
    expect(rows('Empresas').every((row) => natures.has(row[2]) && qualifications.has(row[3]))).toBe(true);
    for (const row of rows('Socios')) {
      expect(roots.has(row[0])).toBe(true);
      expect(qualifications.has(row[4]) && qualifications.has(row[9]), row.join(';')).toBe(true);
      if (row[6]) expect(countries.has(row[6])).toBe(true);
    }
    expect(rows('Simples').every((row) => roots.has(row[0]))).toBe(true);
  });

  it('writes values in the published codes and formats', () => {
    const establishments = rows('Estabelecimentos');
    const count = (value: string) => establishments.filter((row) => row[5] === value).length;
    expect(establishments.every((row) => ['01', '02', '03', '04', '08'].includes(row[5]!))).toBe(true);
    expect(count('02')).toBeGreaterThan(count('08'));
    expect(count('08')).toBeGreaterThan(0);
    for (const row of establishments) {
      expect([row[6], row[10], row[29]].every((date) => /^(\d{8}|0|)$/.test(date!))).toBe(true);
      expect(row[11]).toMatch(/^\d{7}$/);
      expect(row[12]).toMatch(/^(\d{7}(,\d{7})*)?$/);
      for (const i of [21, 23, 25]) expect(`${row[i]}|${row[i + 1]}`).toMatch(/^(\d{2}\|\d{8}|\|)$/);
      if (row[19] !== 'EX') expect(row[18]).toMatch(/^\d{8}$/);
    }
    const emails = establishments.map((row) => row[27]!).filter(Boolean);
    expect(emails.length / establishments.length).toBeGreaterThan(0.3);
    expect(emails.length / establishments.length).toBeLessThan(0.5);
    expect(emails.some((email) => /[A-Z]/.test(email)) && emails.some((email) => /[a-z]/.test(email))).toBe(true);

    for (const row of rows('Empresas')) {
      expect(row[4]).toMatch(/^\d+,\d{2}$/);
      expect(['', '00', '01', '03', '05']).toContain(row[5]);
      expect(row[6] === '').toBe(!row[2]!.startsWith('1'));
    }

    const partners = rows('Socios');
    for (const row of partners) {
      expect(['1', '2', '3']).toContain(row[1]);
      if (row[1] === '2') expect(row[3]).toMatch(/^\*\*\*\d{6}\*\*$/);
      if (row[1] === '1') expect(checkCnpj(row[3]!).status).toBe('valid');
      expect(row[10]).toMatch(/^\d$/);
    }
    const unrepresented = partners.filter((row) => row[7] === '***000000**');
    expect(unrepresented.every((row) => row[8] === '' && row[9] === '00')).toBe(true);
    expect(unrepresented.length / partners.length).toBeGreaterThan(0.9);
    expect(rows('Simples').every((row) => ['S', 'N'].includes(row[1]!) && ['S', 'N', ''].includes(row[4]!))).toBe(true);
  });

  it('names businesses after their main activity', () => {
    const roots = new Set(rows('Empresas').filter((row) => /^PADARIA /.test(row[1]!)).map((row) => row[0]));
    expect(roots.size).toBeGreaterThan(0);
    const bakeries = rows('Estabelecimentos').filter((row) => row[3] === '1' && roots.has(row[0]));
    expect(bakeries.every((row) => ['4721102', '1091102', '1091101', '4721104'].includes(row[11]!))).toBe(true);
  });

  it('writes the same bytes for the same seed and different ones for another seed', async () => {
    const options = { establishments: ESTABLISHMENTS, seed: SEED };
    const again = await generateRelease({ ...options, dir: path.join(workDir, 'again') });
    for (const [i, file] of again.files.entries()) {
      expect((await readFile(file)).equals(await readFile(release.files[i]!)), file).toBe(true);
    }
    const other = await generateRelease({ ...options, dir: path.join(workDir, 'other'), seed: SEED + 1 });
    expect(other.establishments).toBe(ESTABLISHMENTS);
    for (const zip of ['Empresas0.zip', 'Estabelecimentos0.zip', 'Socios0.zip', 'Simples.zip']) {
      const index = ZIPS.indexOf(zip);
      expect((await readFile(other.files[index]!)).equals(await readFile(release.files[index]!)), zip).toBe(false);
    }
  });

  it('writes the extracted CSVs under their inner names with the csv format', async () => {
    const dir = path.join(workDir, 'csv');
    const csv = await generateRelease({ dir, establishments: ESTABLISHMENTS, seed: SEED, format: 'csv' });
    expect(csv.files.map((file) => path.basename(file))).toEqual(ZIPS.map((zip) => entries.get(zip)!.name));
    for (const [i, file] of csv.files.entries()) {
      expect((await readFile(file)).equals(entries.get(ZIPS[i]!)!.bytes), file).toBe(true);
    }
  });

  it('writes the next month of a release: the same establishments, about the rate of them changed this month, some opened, a few gone', async () => {
    // The release of 2026-10 (the default) as the month after 2026-09's of the same seed.
    const dir = path.join(workDir, 'after');
    const base = await generateRelease({ dir: path.join(dir, 'september'), establishments: ESTABLISHMENTS, seed: SEED, release: '2026-09', format: 'csv' });
    const next = await generateRelease({ dir: path.join(dir, 'october'), establishments: ESTABLISHMENTS, seed: SEED, format: 'csv', after: { from: '2026-09', rate: 0.1 } });
    const establishmentsOf = async (files: string[]) => {
      const byCnpj = new Map<string, string[]>();
      for (const file of files.filter((f) => f.endsWith('.ESTABELE'))) for (const row of parse(await readFile(file))) byCnpj.set(row.slice(0, 3).join(''), row);
      return byCnpj;
    };
    const before = await establishmentsOf(base.files);
    const after = await establishmentsOf(next.files);
    expect(after.size).toBe(next.establishments);
    const opened = [...after.keys()].filter((cnpj) => !before.has(cnpj));
    const gone = [...before.keys()].filter((cnpj) => !after.has(cnpj));
    const changed = [...after].filter(([cnpj, row]) => before.has(cnpj) && row.join(';') !== before.get(cnpj)!.join(';'));
    expect(changed.length / ESTABLISHMENTS).toBeGreaterThan(0.07);
    expect(changed.length / ESTABLISHMENTS).toBeLessThan(0.13);
    expect(opened.length).toBeGreaterThan(0);
    expect(gone.length).toBeGreaterThan(0);
    expect(next.establishments).toBe(ESTABLISHMENTS + opened.length - gone.length);
    // What changed happened this month: a branch opened, and a new status, from September's extraction on (the 13th).
    for (const cnpj of opened) expect(after.get(cnpj)![10]! >= '20260913', cnpj).toBe(true);
    for (const [cnpj, row] of changed) if (row[5] !== before.get(cnpj)![5]) expect(row[6]! >= '20260913', cnpj).toBe(true);
    // New partners join this month too.
    const partners = (files: string[]) => Promise.all(files.filter((f) => f.endsWith('.SOCIOCSV')).map(async (f) => parse(await readFile(f)))).then((p) => p.flat());
    expect((await partners(next.files)).length).toBeGreaterThan((await partners(base.files)).length);
    await expect(generateRelease({ dir, establishments: 5, release: '2026-09', after: { from: '2026-09', rate: 0.1 } })).rejects.toThrow(RangeError);
  });

  it("names the inner files after the release's extraction date and rejects bad options", async () => {
    const dir = path.join(workDir, 'march');
    const march = await generateRelease({ dir, establishments: 5, release: '2025-03', format: 'csv' });
    expect(path.basename(march.files[0]!)).toBe('K3241.K03200Y0.D50309.EMPRECSV');
    await expect(generateRelease({ dir: workDir, establishments: 0 })).rejects.toThrow(RangeError);
    await expect(generateRelease({ dir: workDir, establishments: 5, release: '2026-13' })).rejects.toThrow(RangeError);
  });
});
