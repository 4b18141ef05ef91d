/**
 * Issue 22: `GET /health` and the provider catalog's `receita_federal` entry say which release
 * the registry holds and when it was imported; a generated release (tax-regime files included)
 * imports whole and its companies come back with their tax regimes, within the contract.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importRelease, type ImportSummary } from '../../../server/receita/import/importer.ts';
import { generateRelease, type GeneratedRelease } from '../../../server/seed/release-generator.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let app: TestApp;
let generated: GeneratedRelease;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('release tracking', () => {
  it('says no release is loaded before any import', async () => {
    const health = await app.request('GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.registry).toBeNull();
    const providers = await app.request('GET', '/v1/api/providers');
    expect(providers.body.providers.find((p: { id: string }) => p.id === 'receita_federal').release).toBeNull();
    expect(providers.body.providers.find((p: { id: string }) => p.id === 'brasilapi')).not.toHaveProperty('release');
  });

  it('says which release is loaded and when, once imported', async () => {
    const dir = path.join(await tempDir('release'), '2026-10');
    generated = await generateRelease({ dir, establishments: 400, seed: 3 });
    const before = Date.now();
    const summary: ImportSummary = await importRelease(app.services.store, { dir });
    app.services.companies.changed();
    expect(summary).toMatchObject({ release: '2026-10', releaseFrom: 'the folder name "2026-10"', complete: true, establishments: 400 });
    expect(summary.taxRegimes.rows).toBe(generated.taxRegimes);
    expect(summary.problems.count).toBe(0);
    expect(summary.unknownCodes).toEqual({});

    const health = await app.request('GET', '/v1/health');
    expect(health.body.registry).toEqual({ release: '2026-10', importedAt: expect.any(String), complete: true, establishments: 400 });
    expect(Date.parse(health.body.registry.importedAt)).toBeGreaterThanOrEqual(before - 1000);
    const providers = await app.request('GET', '/v1/api/providers');
    expect(providers.body.providers.find((p: { id: string }) => p.id === 'receita_federal').release).toEqual(health.body.registry);
  });

  it('answers lookups with the tax regimes by year', async () => {
    const { apiKey } = await app.workspace();
    // An establishment with tax regimes, found by the filter on them.
    let cnpj: string | undefined;
    for (const regime of ['lucro_presumido', 'lucro_real', 'imune', 'isenta', 'lucro_arbitrado']) {
      cnpj ??= (await app.services.companies.search({ taxRegime: { regime } } as never, 1)).companies[0]?.cnpj;
    }
    const res = await app.request('POST', '/v1/api/companies/cnpj/batch', { key: apiKey, body: { cnpjs: [cnpj] } });
    expect(res.status).toBe(200);
    const company = res.body.results[0];
    expect(company.taxRegimes.length).toBeGreaterThan(0);
    const years = company.taxRegimes.map((r: { year: number }) => r.year);
    expect(years).toEqual([...years].sort((a, b) => b - a));
  });
});
