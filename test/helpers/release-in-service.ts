/**
 * Puts documents in service as a release file of the embedded store's registry (registry/), as
 * an import would leave them, without reading a release's files: for the tests of the search and
 * the lookups on that layout.
 */
import { randomUUID } from 'node:crypto';
import type { CompanyDoc } from '../../server/companies/company-record.ts';
import type { TaxRegimeDoc } from '../../server/companies/tax-regimes.ts';
import { registryOf } from '../../server/companies/registry/registry.ts';
import { ReleaseWriter } from '../../server/receita/import/release-writer.ts';
import { codecTables, RecordEncoder, withDictionary } from '../../server/companies/registry/record-codec.ts';
import { stagedRow } from '../../server/companies/registry/staged-row.ts';
import type { Store } from '../../server/store/port.ts';

export async function putReleaseFile(store: Store, docs: CompanyDoc[], regimes: TaxRegimeDoc[] = [], release = '2026-10'): Promise<void> {
  const registry = registryOf(store)!;
  const path = registry.pathFor(release, randomUUID());
  const writer = new ReleaseWriter(path);
  const tables = codecTables({}, release);
  writer.codec = withDictionary(tables, docs.map(({ _id, search, importRun, ...record }) => record));
  const encoder = new RecordEncoder(writer.codec);
  writer.putTaxRegimes(regimes);
  writer.put(docs.map((doc, i) => stagedRow(doc, encoder, i)));
  await writer.finish({ meta: { release, complete: true, synthetic: false }, previous: null, keepUnwritten: false, keepTaxRegimes: false, codec: () => tables });
  writer.close();
  registry.switchTo(path);
}
