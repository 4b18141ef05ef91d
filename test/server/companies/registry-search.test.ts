/**
 * Issue 22's search filters (size, Simples and MEI now, partner age band, federative entity, tax
 * regime by year) on both store adapters, as the store conformance suite runs: the MongoDB half
 * when a mongod can be had (MONGODB_URI or a local binary), else skipped saying why. Then over
 * HTTP: validated, answered with records the contract accepts, and refused by name by BrasilAPI.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Companies } from '../../../server/companies/companies.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import type { CompanyFilters } from '../../../server/companies/search-plan.ts';
import type { TaxRegimeDoc } from '../../../server/companies/tax-regimes.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { putReleaseFile } from '../../helpers/release-in-service.ts';
import { mongoForTests, throwawayMongoStore } from '../store/mongo-server.ts';

const micro = makeCnpj('10000001');
const small = makeCnpj('10000002');
const other = makeCnpj('10000003');
const city = makeCnpj('10000004');
const alnum = '12ABC34501DE35';

const age = (code: string) => ({ code, description: null });

function docs(): CompanyDoc[] {
  return [
    companyDoc(micro, {
      fiscalSize: '01',
      simplesOption: true,
      meiOption: true,
      partners: [partner({ name: 'ANA', ageBand: age('3') })],
      taxRegimeKeys: [],
    }),
    companyDoc(small, {
      fiscalSize: '03',
      simplesOption: true,
      meiOption: false,
      partners: [partner({ name: 'BRUNO', ageBand: age('9') }), partner({ name: 'CAIO', ageBand: age('4') })],
      taxRegimeKeys: ['lucro_presumido', 'lucro_presumido:2022', 'lucro_real', 'lucro_real:2023'],
    }),
    companyDoc(other, {
      fiscalSize: '05',
      simplesOption: false,
      meiOption: null,
      taxRegimeKeys: ['lucro_real', 'lucro_real:2022'],
    }),
    companyDoc(city, {
      fiscalSize: '00',
      simplesOption: null,
      meiOption: null,
      federativeEntity: 'SÃO PAULO - SP',
      legalNature: { code: '1244', description: 'Município' },
      taxRegimeKeys: ['imune', 'imune:2023'],
    }),
    companyDoc(alnum, {
      fiscalSize: '01',
      simplesOption: true,
      meiOption: true,
      federativeEntity: 'UNIÃO',
      partners: [partner({ name: 'DORA', ageBand: age('9') })],
      taxRegimeKeys: ['lucro_real', 'lucro_real:2023', 'lucro_arbitrado', 'lucro_arbitrado:2023'],
    }),
  ];
}

const regimes: TaxRegimeDoc[] = [
  { _id: `${small}:2023:0:lucro_real`, cnpj: small, year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 1, release: '2026-10', importRun: 'test' },
  { _id: `${small}:2022:0:lucro_presumido`, cnpj: small, year: 2022, form: 'LUCRO PRESUMIDO', scpCnpj: null, bookkeepingEntries: 1, release: '2026-10', importRun: 'test' },
];

/** [filters, CNPJs expected in CNPJ order] */
const CASES: Array<[string, CompanyFilters, string[]]> = [
  ['size 01', { fiscalSizes: ['01'] }, [micro, alnum]],
  ['size 00 and 05', { fiscalSizes: ['00', '05'] }, [other, city]],
  ['size by word', { sizes: ['EPP'] }, [small]],
  ['Simples now', { simpleOption: true }, [micro, small, alnum]],
  ['not in Simples', { simpleOption: false }, [other]],
  ['MEI now', { meiOption: true }, [micro, alnum]],
  ['MEI now and micro', { meiOption: true, fiscalSizes: ['01'] }, [micro, alnum]],
  ['partner over 80', { partnerAgeBands: ['9'] }, [small, alnum]],
  ['partner 21 to 40', { partnerAgeBands: ['3', '4'] }, [micro, small]],
  ['federative entity, accents and case ignored', { federativeEntity: 'sao paulo - sp' }, [city]],
  ['federative entity União', { federativeEntity: 'Uniao' }, [alnum]],
  ['tax regime, any year', { taxRegime: { regime: 'lucro_real' } }, [small, other, alnum]],
  ['tax regime in a year', { taxRegime: { regime: 'lucro_real', year: 2023 } }, [small, alnum]],
  ['tax regime from a combined form', { taxRegime: { regime: 'lucro_arbitrado', year: 2023 } }, [alnum]],
  ['immune', { taxRegime: { regime: 'imune' } }, [city]],
  ['no such year', { taxRegime: { regime: 'lucro_presumido', year: 2019 } }, []],
  ['partner by a word\'s prefix (issue 41)', { partnerName: 'bru*' }, [small]],
  ['partner by prefix and word', { partnerName: 'cai* bruno' }, [small]],
  ['partner by prefix and word of different companies', { partnerName: 'cai* ana' }, []],
  ['every new filter at once', { fiscalSizes: ['03'], simpleOption: true, partnerAgeBands: ['9'], taxRegime: { regime: 'lucro_presumido', year: 2022 } }, [small]],
];

function searches(
  open: () => Promise<{ store: Store; dispose: () => Promise<void> }>,
  /** Where the documents go; by default the collections. */
  put?: (store: Store) => Promise<void>,
): void {
  let opened: { store: Store; dispose: () => Promise<void> };
  let companies: Companies;

  beforeAll(async () => {
    opened = await open();
    if (put) await put(opened.store);
    else {
      await opened.store.collection<CompanyDoc>('companies').bulkWrite(docs().map((document) => ({ insertOne: { document } })));
      await opened.store.collection<TaxRegimeDoc>('tax_regimes').bulkWrite(regimes.map((document) => ({ insertOne: { document } })));
    }
    companies = new Companies(opened.store);
  });
  afterAll(() => opened?.dispose());

  it.each(CASES)('%s', async (_name, filters, expected) => {
    const { companies: found } = await companies.search(filters, 20);
    expect(found.map((c) => c.cnpj)).toEqual([...expected].sort());
  });

  it('returns each company with its tax regimes by year, newest first', async () => {
    const found = await companies.byCnpj([small, micro]);
    expect(found.get(small)!.taxRegimes).toEqual([
      { year: 2023, form: 'LUCRO REAL', scpCnpj: null, bookkeepingEntries: 1 },
      { year: 2022, form: 'LUCRO PRESUMIDO', scpCnpj: null, bookkeepingEntries: 1 },
    ]);
    expect(found.get(micro)!.taxRegimes).toEqual([]);
  });
}

describe('issue 22 filters on the embedded store (its collections, before release files)', () => {
  searches(async () => {
    const store = await openEmbeddedStore(await tempDir('registry-search'));
    return { store, dispose: () => store.close() };
  });
});

describe('issue 22 filters on the embedded store\'s release files', () => {
  searches(async () => {
    const store = await openEmbeddedStore(await tempDir('registry-search'));
    return { store, dispose: () => store.close() };
  }, (store) => putReleaseFile(store, docs(), regimes));
});

const mongo = await mongoForTests();
if (!mongo.uri && 'reason' in mongo) console.warn(`issue 22 filters on MongoDB: skipped, ${mongo.reason}`);

describe.skipIf(!mongo.uri)('issue 22 filters on MongoDB', () => {
  afterAll(() => (mongo.uri ? mongo.stop() : undefined));
  searches(() => throwawayMongoStore(mongo.uri!));
});

describe('issue 22 filters over HTTP', () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp();
    await app.services.store.collection<CompanyDoc>('companies').bulkWrite(docs().map((document) => ({ insertOne: { document } })));
    await app.services.store.collection<TaxRegimeDoc>('tax_regimes').bulkWrite(regimes.map((document) => ({ insertOne: { document } })));
    ({ apiKey: key } = await app.workspace());
  });
  afterAll(() => app?.close());
  const search = (body: unknown) => app.request('POST', '/v1/api/companies/search', { key, body });

  it('answers the new filters with records that carry every new field', async () => {
    const res = await search({ taxRegime: { regime: 'lucro_real', year: 2023 }, partnerAgeBands: ['9'], limit: 20 });
    expect(res.status).toBe(200);
    expect(res.body.results.map((c: { cnpj: string }) => c.cnpj)).toEqual([small, alnum].sort());
    expect(res.body.results.find((c: { cnpj: string }) => c.cnpj === small)).toMatchObject({
      size: { code: '01', description: 'MICRO EMPRESA' },
      simples: { option: true },
      taxRegimes: [{ year: 2023, form: 'LUCRO REAL' }, { year: 2022, form: 'LUCRO PRESUMIDO' }],
    });
  });

  it.each([
    [{ partnerAgeBands: ['10'] }, 'partnerAgeBands'],
    [{ fiscalSizes: ['04'] }, 'fiscalSizes'],
    [{ meiOption: 'yes' }, 'meiOption'],
    [{ taxRegime: { regime: 'simples' } }, 'taxRegime'],
    [{ taxRegime: { regime: 'lucro_real', year: 1800 } }, 'taxRegime'],
    [{ taxRegime: { year: 2023 } }, 'taxRegime'],
    [{ federativeEntity: ' - ' }, 'federativeEntity'],
  ])('refuses %j naming %s', async (body, field) => {
    const res = await search(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_request', message: expect.stringContaining(field) });
  });

  it.each([
    ['taxRegime', { taxRegime: { regime: 'imune' } }],
    ['partnerAgeBands', { partnerAgeBands: ['9'] }],
    ['meiOption', { meiOption: true }],
    ['federativeEntity', { federativeEntity: 'UNIAO' }],
    ['fiscalSizes', { fiscalSizes: ['05'] }],
  ])('BrasilAPI refuses %s by name; the registry still answers', async (name, filters) => {
    const res = await search({ ...filters, companyOrder: ['brasilapi', 'receita_federal'] });
    expect(res.status).toBe(200);
    expect(res.body.sources[0]).toEqual({
      source: 'brasilapi',
      count: 0,
      error: `BrasilAPI cannot filter companies by ${name}: it answers lookups by CNPJ only`,
    });
    expect(res.body.sources[1]).toMatchObject({ source: 'receita_federal' });
    expect(res.body.sources[1].count).toBeGreaterThan(0);
  });
});
