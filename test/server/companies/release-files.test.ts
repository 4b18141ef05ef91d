/**
 * Issue 41: the registry as release files on the embedded store (server/companies/registry/).
 * The search on a release file answers what a plain scan answers (the same documents in the
 * store's collections, which mingo tests one by one), page after page, whether the query walks
 * the file in CNPJ order or starts from an index; names and partners are found by word and by
 * prefix, accents ignored; an import writes beside the release in service and switches in one
 * step; the same release imported twice answers the same bytes; a damaged file is named.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { copyFile, open as openFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Companies } from '../../../server/companies/companies.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { planSearch, type CompanyFilters } from '../../../server/companies/search-plan.ts';
import { importRelease } from '../../../server/receita/import/importer.ts';
import { Registry } from '../../../server/companies/registry/registry.ts';
import { generateRelease } from '../../../server/seed/release-generator.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { RawJson } from '../../../server/lib/raw-json.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';
import { putReleaseFile } from '../../helpers/release-in-service.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/** A small deterministic generator, so that a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

const STATES = ['SP', 'RJ', 'MG', 'AC'];
const CITIES: Record<string, string[]> = { SP: ['SAO PAULO', 'CAMPINAS'], RJ: ['RIO DE JANEIRO'], MG: ['BELO HORIZONTE', 'UBÁ'], AC: ['RIO BRANCO'] };
const CNAES = ['1091102', '4721102', '6201501', '5611201', '0111301'];
const NAMES = ['PADARIA SÃO JOÃO', 'AÇAÍ DO PARÁ', 'MARIA SOUZA COMERCIO', 'TECNOLOGIA AVANÇADA', 'PADARIA CENTRAL', 'JOSÉ ÁVILA SERVIÇOS'];
const PARTNERS = ['MARIA SOUZA', 'JOÃO ÁVILA', 'ANA PAULA', 'MARIANA LIMA'];
const STATUSES = ['ATIVA', 'BAIXADA', 'INAPTA'] as const;

function docs(count: number, seed = 41): CompanyDoc[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  return Array.from({ length: count }, (_, i) => {
    const state = pick(STATES);
    const main = pick(CNAES);
    const secondary = next() < 0.5 ? [pick(CNAES)].filter((c) => c !== main) : [];
    return companyDoc(makeCnpj(String(10_000_000 + i * 7), next() < 0.8 ? '0001' : '0002'), {
      name: `${pick(NAMES)} ${i} LTDA`,
      registrationStatus: pick(STATUSES),
      mainActivity: { code: main, description: `atividade ${main}` },
      secondaryActivities: secondary.map((code) => ({ code, description: `atividade ${code}` })),
      capital: Math.floor(next() * 10) * 25_000,
      openingDate: `20${10 + Math.floor(next() * 15)}-0${1 + Math.floor(next() * 9)}-15`,
      simplesOption: next() < 0.5,
      fiscalSize: pick(['01', '03', '05'] as const),
      legalNature: pick([{ code: '2062', description: 'Sociedade Empresária Limitada' }, { code: '2135', description: 'Empresário (Individual)' }]),
      address: { street: 'RUA A', number: String(i), complement: null, district: 'CENTRO', zipCode: '01001000', city: pick(CITIES[state]!), cityCode: '1', state, country: null },
      phones: next() < 0.6 ? ['1133334444'] : [],
      email: next() < 0.3 ? `contato${i}@example.com` : null,
      partners: next() < 0.7 ? [partner({ name: pick(PARTNERS), document: `***${String(100_000 + (i % 50))}**` })] : [],
    });
  });
}

const FILTERS: CompanyFilters[] = [
  {},
  { state: 'SP' },
  { state: 'AC', registrationStatuses: ['ATIVA'] },
  { city: 'Ubá' },
  { location: 'Campinas, SP' },
  { cnaes: ['1091102'] },
  { cnaes: ['4721102', '6201501'], state: 'MG' },
  { cnaes: ['10'] },
  { capitalMin: 50_000, capitalMax: 100_000 },
  { capitalMin: 200_000, hasEmail: true },
  { openingDateMin: '2015-01-01', openingDateMax: '2018-12-31' },
  { simpleOption: true, fiscalSizes: ['01'] },
  { sizes: ['EPP'], hasPhone: false },
  { legalNatureCodes: ['2135'] },
  { establishmentTypes: ['FILIAL'] },
  { name: 'padaria' },
  { name: 'acai para' },
  { name: 'pada*' },
  { name: 'padaria s*' },
  { partnerName: 'maria souza' },
  { partnerName: 'mari*' },
  { partnerDocument: '***100007**' },
  { name: 'padaria', state: 'SP', registrationStatuses: ['ATIVA', 'INAPTA'], hasPhone: true },
];

describe('the search on a release file', () => {
  const all = docs(400);
  let filesStore: Store;
  let scanStore: Store;
  let inFiles: Companies;
  let scanned: Companies;

  beforeEach(async () => {
    filesStore = await openEmbeddedStore(await tempDir('release-files'));
    scanStore = await openEmbeddedStore(await tempDir('release-scan'));
    await putReleaseFile(filesStore, all);
    await scanStore.collection<CompanyDoc>('companies').bulkWrite(all.map((document) => ({ insertOne: { document } })));
    inFiles = new Companies(filesStore);
    scanned = new Companies(scanStore);
  });
  afterEach(async () => {
    await filesStore.close();
    await scanStore.close();
  });

  /** Every page of `size`, the CNPJs in order, as a client walks them. */
  async function pages(companies: Companies, filters: CompanyFilters, size: number): Promise<string[]> {
    const found: string[] = [];
    for (let after: string | undefined; ; ) {
      const { companies: page } = await companies.search(filters, size, after);
      found.push(...page.map((c) => c.cnpj));
      if (page.length < size) return found;
      after = page.at(-1)!.cnpj;
    }
  }

  it.each(FILTERS.map((f) => [JSON.stringify(f), f] as const))('%s: the same CNPJs as a plain scan, page after page', async (_name, filters) => {
    const expected = await pages(scanned, filters, 1000);
    expect(await pages(inFiles, filters, 1000)).toEqual(expected);
    expect(await pages(inFiles, filters, 7)).toEqual(expected);
    // Both ways the file can be read: walking it in CNPJ order, and from the most selective index.
    const file = inFiles.registry!.current()!;
    const { filter } = planSearch(filters, await inFiles.activities());
    for (const driverCap of [0, Infinity]) expect(file.search(filter, 1000, undefined, false, driverCap)).toEqual(expected);
    // And page after page with no index counted selective enough, as in a large release: a walk,
    // or a full-text condition's matches in key order.
    const walked: string[] = [];
    for (let after: string | undefined; ; ) {
      const page = file.search(filter, 7, after, false, 0);
      walked.push(...page);
      if (page.length < 7) break;
      after = page.at(-1);
    }
    expect(walked).toEqual(expected);
  });

  it('finds names and partners by word and by prefix, accents and case ignored', async () => {
    const names = async (filters: CompanyFilters) => (await inFiles.search(filters, 1000)).companies.map((c) => c.name);
    expect(await names({ name: 'Açaí' })).toEqual(all.filter((d) => d.name.startsWith('AÇAÍ')).map((d) => d.name));
    expect(await names({ name: 'acai' })).toEqual(await names({ name: 'AÇAÍ' }));
    expect((await names({ name: 'avanc*' })).every((n) => n.startsWith('TECNOLOGIA AVANÇADA'))).toBe(true);
    expect(await names({ name: 'avanc*' })).not.toEqual([]);
    // A prefix is not a word: `padar` alone names no company.
    expect(await names({ name: 'padar' })).toEqual([]);
    const partners = (await inFiles.search({ partnerName: 'joao avila' }, 1000)).companies;
    expect(partners.length).toBeGreaterThan(0);
    expect(partners.every((c) => c.partners.some((p) => p.name === 'JOÃO ÁVILA'))).toBe(true);
  });

  it('answers a batch with the documents as stored, each with its own CNPJ, and nothing for an unknown one', async () => {
    const wanted = [all[3]!._id, all[200]!._id, makeCnpj('99999999')];
    const views = await inFiles.views(wanted, true);
    expect([...views.keys()]).toEqual(wanted.slice(0, 2));
    for (const cnpj of wanted.slice(0, 2)) {
      const raw = views.get(cnpj) as unknown as RawJson;
      const { _id, search, importRun, ...record } = all.find((d) => d._id === cnpj)!;
      expect(JSON.parse(Buffer.concat(raw.pieces).toString())).toEqual({ ...record, taxRegimes: [], source: 'receita_federal' });
    }
  });
});

describe('imports into release files', () => {
  let dir: string;
  let store: Store;
  let releases: string;

  beforeEach(async () => {
    dir = await tempDir('release-import');
    releases = await tempDir('release-dirs');
    store = await openEmbeddedStore(dir);
  });
  afterEach(() => store.close());

  async function generated(release: string, seed: number): Promise<string> {
    const at = path.join(releases, release);
    await generateRelease({ dir: at, establishments: 1_500, seed, release });
    return at;
  }

  it('writes beside the release in service, switches in one step, and the replaced file goes while a request still holds it', async () => {
    const companies = new Companies(store);
    await importRelease(store, { dir: await generated('2026-09', 1), release: '2026-09' });
    const held = companies.registry!.current()!;
    const [first] = held.search({}, 1);
    expect(held.meta.release).toBe('2026-09');
    const before = held.json([first!]).get(first!)!.toString();

    await importRelease(store, { dir: await generated('2026-10', 2), release: '2026-10' });
    // A request that took the old release before the switch reads it whole.
    expect(held.json([first!]).get(first!)!.toString()).toBe(before);
    expect(JSON.parse(before).release).toBe('2026-09');
    expect(existsSync(held.path)).toBe(false);
    // Every request after the switch reads the new one; health names it.
    expect(companies.registry!.current()!.meta.release).toBe('2026-10');
    expect((await companies.releases.loaded())!.release).toBe('2026-10');
    const files = (await readdir(companies.registry!.dir)).filter((f) => f.endsWith('.sqlite'));
    expect(files).toEqual([path.basename(companies.registry!.current()!.path)]);
  });

  it('answers the same bytes for a release imported twice', async () => {
    const release = await generated('2026-10', 3);
    const companies = new Companies(store);
    const answers = async () => {
      const file = companies.registry!.current()!;
      const cnpjs = file.search({}, 5_000);
      const views = await companies.views(cnpjs, true);
      const batch = [...views.values()].map((v) => Buffer.concat((v as unknown as RawJson).pieces).toString()).join('\n');
      const search = JSON.stringify(await companies.search({ state: 'SP', registrationStatuses: ['ATIVA'] }, 50));
      return { count: cnpjs.length, batch, search };
    };
    await importRelease(store, { dir: release, release: '2026-10' });
    const first = await answers();
    await importRelease(store, { dir: release, release: '2026-10' });
    const second = await answers();
    expect(first.count).toBe(1_500);
    expect(second).toEqual(first);
  });

  it('starts again, rather than resume, an import whose staging an older version began', async () => {
    const release = await generated('2026-10', 9);
    const stop = new AbortController();
    const killed = importRelease(store, {
      dir: release,
      release: '2026-10',
      signal: stop.signal,
      onProgress: (progress) => progress.phase === 'establishments' && stop.abort(),
    });
    await expect(killed).rejects.toThrow();
    // As an older version leaves it: a staging file without this version's form in its header.
    const registry = path.join(dir, 'registry');
    const stage = (await readdir(registry)).find((name) => name.endsWith('.stage.sqlite'))!;
    const older = new Database(path.join(registry, stage));
    expect(older.pragma('user_version', { simple: true })).toBeGreaterThan(0);
    older.pragma('user_version = 0');
    older.close();

    const summary = await importRelease(store, { dir: release, release: '2026-10' });
    expect(summary).toMatchObject({ resumed: false, complete: true, establishments: 1_500 });
    expect(existsSync(path.join(registry, stage))).toBe(false);
    const file = new Companies(store).registry!.current()!;
    expect(file.search({}, 5_000)).toHaveLength(1_500);
  });

  it('answers a CNPJ asked alone (read by its key) as it answers it within a batch (read through one list)', async () => {
    await importRelease(store, { dir: await generated('2026-10', 5), release: '2026-10' });
    const file = new Companies(store).registry!.current()!;
    const cnpjs = file.search({}, 5_000);
    const regimes = file.taxRegimes(cnpjs);
    const docs = file.json(cnpjs);
    // Those with several tax-regime rows: a lookup by key that kept one row would lose the others.
    const several = cnpjs.filter((cnpj) => (regimes.get(cnpj)?.length ?? 0) > 1).slice(0, 50);
    expect(several.length).toBeGreaterThan(0);
    for (const cnpj of [...several, cnpjs[0]!]) {
      expect(file.taxRegimes([cnpj]).get(cnpj)).toEqual(regimes.get(cnpj));
      expect(file.json([cnpj]).get(cnpj)).toEqual(docs.get(cnpj));
    }
    expect(file.json([makeCnpj('99999999')]).size).toBe(0);
  });

  it('names a pointer that is not one of its own files at start-up, and never answers from what it points to', async () => {
    const companies = new Companies(store);
    await importRelease(store, { dir: await generated('2026-10', 4), release: '2026-10' });
    const { dir: registryDir } = companies.registry!;
    const inService = companies.registry!.current()!;
    const [cnpj] = inService.search({}, 1);
    companies.registry!.close();
    // A whole release file, but outside the registry's folder (copied, or the pointer edited).
    const outside = path.join(releases, 'elsewhere.sqlite');
    await copyFile(inService.path, outside);
    const pointer = path.join(registryDir, 'current.json');
    for (const [written, why] of [
      [JSON.stringify({ file: path.relative(registryDir, outside) }), 'not a file of'],
      [JSON.stringify({ file: outside }), 'not a file of'],
      [JSON.stringify({ file: 'current.json' }), 'not a file of'],
      ['null', 'does not name'],
      [JSON.stringify({ file: 5 }), 'does not name'],
      ['{"fi', 'cannot be read'],
    ] as const) {
      await writeFile(pointer, written);
      const reopened = new Registry(registryDir);
      const problem = reopened.problem();
      expect(problem, written).toContain(pointer);
      expect(problem, written).toContain(why);
      await expect(new Companies(store).byCnpj([cnpj!]), written).rejects.toThrow(pointer);
    }
  });

  it('names the file when a document in it is damaged, and answers only whole documents of the CNPJ asked', async () => {
    const companies = new Companies(store);
    await importRelease(store, { dir: await generated('2026-10', 4), release: '2026-10' });
    const file = companies.registry!.current()!;
    const cnpjs = file.search({}, 50);
    const filePath = file.path;
    companies.registry!.close();
    // Each document's stored bytes zeroed where they lie in the file, as a damaged disk would leave them.
    const db = new Database(filePath, { readonly: true });
    const bodies = db.prepare('SELECT body FROM doc ORDER BY k LIMIT 50').pluck().all() as Buffer[];
    db.close();
    const handle = await openFile(filePath, 'r+');
    const bytes = await handle.readFile();
    for (const body of bodies.slice(10, 20)) {
      const at = bytes.indexOf(body);
      if (at > 0 && body.length > 40) await handle.write(Buffer.alloc(body.length - 30), 0, body.length - 30, at + 30);
    }
    await handle.close();
    let damaged = 0;
    for (const cnpj of cnpjs) {
      const answer = await new Companies(store).byCnpj([cnpj]).catch((err: unknown) => err as Error);
      if (answer instanceof Error) {
        expect(answer.message).toContain(filePath);
        damaged++;
      } else expect(answer.get(cnpj)?.cnpj).toBe(cnpj);
    }
    expect(damaged).toBeGreaterThan(0);
  });

  it('names a damaged release file at start-up, and never answers from it', async () => {
    const companies = new Companies(store);
    await importRelease(store, { dir: await generated('2026-10', 4), release: '2026-10' });
    const file = companies.registry!.current()!;
    const [cnpj] = file.search({}, 1);
    const filePath = file.path;
    companies.registry!.close();
    const handle = await openFile(filePath, 'r+');
    await handle.write(Buffer.alloc(100, 0x41), 0, 100, 0);
    await handle.close();
    const reopened = new Registry(companies.registry!.dir);
    expect(reopened.problem()).toContain(filePath);
    await expect(new Companies(store).byCnpj([cnpj!])).rejects.toThrow(filePath);
  });
});
