/**
 * Issue 41: a release file's search tables (CNAEs, partners' documents, the full-text indexes)
 * are built in a file of their own, by a worker thread while the writer's thread builds the rest,
 * then copied in. The copy is the whole of each table; built in a worker or in this thread, or
 * resumed after a kill between its tables, the release file holds the same rows; a failure in
 * the worker reaches the import with SQLite's code (which names a full disk).
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { codecTables, RecordEncoder, withDictionary } from '../../../server/companies/registry/record-codec.ts';
import { SEARCH_SCHEMA, SEARCH_TABLES } from '../../../server/companies/registry/schema.ts';
import { stagedRow } from '../../../server/companies/registry/staged-row.ts';
import { DocumentThread } from '../../../server/receita/import/document-thread.ts';
import { ReleaseWriter, stagePath } from '../../../server/receita/import/release-writer.ts';
import { searchPath } from '../../../server/receita/import/search-tables.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';
import { DOCUMENT_WORKER } from '../../helpers/import-fixture.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const CNAES = ['6201501', '4721102', '1091102', '5611201'];
const WORDS = ['PADARIA', 'SÃO JOÃO', 'AÇAÍ', 'TECNOLOGIA', 'COMÉRCIO'];

function docs(count: number): CompanyDoc[] {
  return Array.from({ length: count }, (_, i) =>
    companyDoc(makeCnpj(String(20_000_000 + i * 13), i % 3 === 0 ? '0002' : '0001'), {
      name: `${WORDS[i % WORDS.length]} ${i} LTDA`,
      mainActivity: { code: CNAES[i % CNAES.length]!, description: 'x' },
      secondaryActivities: i % 2 === 0 ? [{ code: CNAES[(i + 1) % CNAES.length]!, description: 'y' }] : [],
      partners: i % 4 === 0 ? [] : [partner({ name: `${WORDS[(i + 2) % WORDS.length]} SILVA`, document: `***${100_000 + (i % 37)}**` })],
    }),
  );
}

const context = { lookups: { cnaes: new Map(), motivos: new Map(), municipios: new Map(), naturezas: new Map(), paises: new Map(), qualificacoes: new Map() }, release: '2026-10', run: 'test' };

/** A release file with `docs` staged, its end not begun. */
async function staged(name: string, all: CompanyDoc[]): Promise<ReleaseWriter> {
  const writer = new ReleaseWriter(path.join(await tempDir(name), '2026-10-test.sqlite'));
  const tables = codecTables({}, '2026-10');
  writer.codec = withDictionary(tables, all.map(({ _id, search, importRun, ...record }) => record));
  const encoder = new RecordEncoder(writer.codec);
  writer.put(all.map((doc, i) => stagedRow(doc, encoder, i)));
  return writer;
}

const finish = (writer: ReleaseWriter, build?: (path: string, stagePath: string, rowsPaths: string[]) => Promise<void>) =>
  writer.finish({
    meta: { release: '2026-10', complete: true, synthetic: false },
    previous: null,
    keepUnwritten: false,
    keepTaxRegimes: false,
    codec: () => codecTables({}, '2026-10'),
    ...(build ? { buildSearchTables: build } : {}),
  });

/** Every row of the search tables, and what the full-text indexes answer. */
function searchRows(file: string) {
  const db = new Database(file, { readonly: true });
  try {
    const rows = Object.fromEntries(SEARCH_TABLES.map((table) => [table, db.prepare(`SELECT * FROM ${table}`).raw().all()]));
    const match = (table: string, words: string) => db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`).pluck().safeIntegers().all(words).map(String);
    return { rows, padaria: match('names', 'padaria'), joao: match('names', 'joao'), silva: match('partners', 'silv*'), acai: match('partners', 'acai') };
  } finally {
    db.close();
  }
}

describe("a release file's search tables", () => {
  it('are every table the search schema makes: a full-text index is its shadow tables', () => {
    const db = new Database(':memory:');
    db.exec(SEARCH_SCHEMA);
    const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name != 'meta'").pluck().all();
    expect([...tables].sort()).toEqual([...SEARCH_TABLES].sort());
    db.close();
  });

  it('built by a worker thread beside the rest, hold what a build in this thread holds, and their file goes', async () => {
    const all = docs(600);
    const here = await staged('search-here', all);
    await finish(here);
    here.close();
    const expected = searchRows(here.path);
    expect(expected.padaria.length).toBeGreaterThan(100);
    expect(expected.silva.length).toBeGreaterThan(300);
    expect(expected.acai.length).toBeGreaterThan(50);
    expect(expected.rows.activity!.length).toBe(900);

    const thread = new DocumentThread(DOCUMENT_WORKER, context, []);
    try {
      const beside = await staged('search-beside', all);
      await finish(beside, (file, stage, rows) => thread.buildSearchTables(file, stage, rows));
      beside.close();
      expect(searchRows(beside.path)).toEqual(expected);
      expect(existsSync(searchPath(beside.path))).toBe(false);
      expect(existsSync(stagePath(beside.path))).toBe(false);
    } finally {
      await thread.close();
    }
  });

  it('killed between two of its tables, resume with the rest', async () => {
    const all = docs(300);
    const clean = await staged('search-clean', all);
    await finish(clean);
    clean.close();

    // The import killed while building: its first table finished, and the names' index begun (its transaction never committed).
    const killed = await staged('search-resumed', all);
    killed.close();
    const side = new Database(searchPath(killed.path));
    side.exec(SEARCH_SCHEMA);
    side.prepare('ATTACH DATABASE ? AS stage').run(stagePath(killed.path));
    side.exec("INSERT INTO activity SELECT j.value, s.k FROM stage.rows s, json_each(s.activities) j ORDER BY 1, 2; INSERT INTO meta VALUES ('step activity', 'done')");
    side.exec('BEGIN; INSERT INTO names (rowid, words) VALUES (1, \'GHOST\'); ROLLBACK');
    side.close();
    const resumed = new ReleaseWriter(killed.path);
    await finish(resumed);
    resumed.close();
    expect(searchRows(resumed.path)).toEqual(searchRows(clean.path));
  });

  it("failing in the worker, fail the end with SQLite's code, which tells a full disk", async () => {
    const thread = new DocumentThread(DOCUMENT_WORKER, context, []);
    try {
      const dir = await tempDir('search-failing');
      await writeFile(path.join(dir, 'x.search.sqlite'), 'not a database, but long enough to be read as one: '.repeat(100));
      const failed = thread.buildSearchTables(path.join(dir, 'x.search.sqlite'), path.join(dir, 'x.stage.sqlite'), []);
      await expect(failed).rejects.toMatchObject({ code: 'SQLITE_NOTADB', message: expect.stringContaining("the import's worker thread failed") });
      // The thread goes on answering.
      const writer = await staged('search-after-failure', docs(20));
      await finish(writer, (file, stage, rows) => thread.buildSearchTables(file, stage, rows));
      writer.close();
      expect(searchRows(writer.path).rows.activity!.length).toBe(30);
    } finally {
      await thread.close();
    }
  });
});
