/**
 * Changes recorded as an import of `release` over `previous` would record them, written straight
 * into the store's change history: for tests of what reads them (charges) without importing.
 */
import Database from 'better-sqlite3';
import { changeCompany } from '../../server/companies/changes/change-diff.ts';
import { changeFilePath, createChangeFile } from '../../server/companies/changes/change-file.ts';
import { COMPARISONS } from '../../server/companies/changes/change-history.ts';
import { MONGO_CHANGES } from '../../server/companies/changes/mongo-changes.ts';
import type { CompanyDoc } from '../../server/companies/company-record.ts';
import { cnpjKey } from '../../server/companies/registry/cnpj-key.ts';
import type { Store } from '../../server/store/port.ts';
import type { TestApp } from './app.ts';

export async function seedChanges(app: TestApp, release: string, previous: string, changes: Array<{ doc: CompanyDoc; kind: string; fields?: object }>): Promise<void> {
  const store: Store = app.services.store;
  const registry = app.services.companies.registry;
  const rows = changes.map(({ doc, kind, fields = {} }) => ({ cnpj: doc._id, kind, fields, company: changeCompany(doc) }));
  if (registry) {
    const file = changeFilePath(registry.dir);
    createChangeFile(file);
    const db = new Database(file);
    const insert = db.prepare('INSERT INTO change (release, k, kind, previous, body) VALUES (?, ?, ?, ?, ?)');
    for (const row of rows) insert.run(release, cnpjKey(row.cnpj), row.kind, previous, JSON.stringify({ fields: row.fields, company: row.company }));
    db.close();
  } else {
    const docs = rows.map((row) => ({ _id: `${release}|${row.cnpj}|${row.kind}`, release, previousRelease: previous, ...row }));
    await store.collection(MONGO_CHANGES).bulkWrite(docs.map((document) => ({ insertOne: { document } })));
  }
  await store.collection<{ _id: string; [field: string]: unknown }>(COMPARISONS).insertOne({ _id: release, previousRelease: previous, counts: {}, recordedAt: new Date() });
  await store.collection<{ _id: string; [field: string]: unknown }>('registry_imports').insertOne({ _id: release, status: 'complete', finishedAt: new Date(), startedAt: new Date() });
  app.services.companies.changed();
}
