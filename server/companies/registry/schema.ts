/**
 * The layout of one release file (DATA_DIR/registry/<release>-<run>.sqlite): made once by an
 * import, then only read. Documents and the columns the search filters on are two tables keyed
 * by the CNPJ's integer key (cnpj-key.ts), so that a lookup reads only the document's pages and a
 * scan in CNPJ order only the small rows; the filters with many values per establishment (CNAEs,
 * partners' documents) have tables of their own, and names and partners' names full-text indexes
 * (words folded: accents and case ignored, as the search folds them).
 */
/** `opened` is the opening date as the number YYYYMMDD (4 bytes where its text takes 10). */
export const FACT_COLUMNS = [
  'state', 'city', 'status', 'kind', 'size', 'capital', 'opened', 'simples', 'mei', 'nature', 'phone', 'email', 'entity', 'ages', 'regimes',
  // The changes' hash of the compared fields (changes/change-diff.ts): an unchanged establishment costs one comparison.
  'hash',
] as const;

const FILE_SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS doc (k INTEGER PRIMARY KEY, body BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS facts (
    k INTEGER PRIMARY KEY, state TEXT, city TEXT, status TEXT, kind TEXT, size TEXT, capital REAL, opened INTEGER,
    simples INTEGER, mei INTEGER, nature TEXT, phone INTEGER, email INTEGER, entity TEXT, ages TEXT, regimes TEXT, hash INTEGER
  );
  CREATE TABLE IF NOT EXISTS tax_regime (
    k INTEGER NOT NULL, year INTEGER NOT NULL, scp TEXT NOT NULL, form TEXT NOT NULL, entries INTEGER,
    PRIMARY KEY (k, year, scp, form)
  ) WITHOUT ROWID;
`;

/**
 * The search's tables with many entries per establishment: its CNAEs, its partners' documents,
 * and the full-text indexes. An import builds them in a file of their own (search-tables.ts) and
 * copies them into the release file, whose schema includes them.
 */
export const SEARCH_SCHEMA = `
  CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS activity (cnae INTEGER NOT NULL, k INTEGER NOT NULL, PRIMARY KEY (cnae, k)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS partner_doc (doc TEXT NOT NULL, k INTEGER NOT NULL, PRIMARY KEY (doc, k)) WITHOUT ROWID;
  CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5 (words, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 2');
  CREATE VIRTUAL TABLE IF NOT EXISTS partners USING fts5 (words, content='', detail=none, columnsize=0, tokenize='unicode61 remove_diacritics 2');
`;

/**
 * Where SEARCH_SCHEMA's tables keep their rows: a full-text index is its shadow tables (`_data`:
 * the segments, `_idx`: their first terms, `_config`: its version; a contentless index without
 * column sizes has no others), so copying them copies the index.
 */
export const SEARCH_TABLES = ['activity', 'partner_doc', ...['names', 'partners'].flatMap((fts) => ['data', 'idx', 'config'].map((shadow) => `${fts}_${shadow}`))];

export const RELEASE_SCHEMA = FILE_SCHEMA + SEARCH_SCHEMA;

/**
 * The indexes of the single-valued filters that can narrow a search to a few rows, built last from
 * sorted data: what each holds (the federative entity is set on public bodies only). Capital has
 * none: its ranges mostly match many rows, which a walk in key order finds soon (issue 41 kept
 * the release under 500 bytes an establishment).
 */
export const FACT_INDEXES: Record<string, string> = {
  state: 'state',
  city: 'city',
  nature: 'nature',
  opened: 'opened',
  entity: 'entity) WHERE (entity IS NOT NULL',
};

/**
 * Where an import's rows wait until the end (files of their own beside the release, removed
 * then): appended as they come, by the writer's thread (`stage.rows`) and by each worker thread
 * into a file of its own (a SQLite file has one writer at a time), then moved into the release's
 * tables in key order, which leaves their B-tree pages full. `pos` orders the rows of one CNPJ as
 * the release does (its file, then its line: the later wins), whichever file holds them; a
 * resumed import may stage a row twice, at the same place.
 */
export const stagedRowsSchema = (schema: string) => `
  CREATE TABLE IF NOT EXISTS ${schema}.rows (
    k INTEGER NOT NULL, body BLOB NOT NULL, ${FACT_COLUMNS.join(', ')}, name TEXT, partners TEXT, activities TEXT, pdocs TEXT, pos INTEGER NOT NULL
  );
`;

/** The staged rows of every file that holds some (attached as `schemas`), as one temporary view named `staged`. */
export const stagedView = (schemas: string[]) =>
  `CREATE TEMP VIEW IF NOT EXISTS staged AS ${schemas.map((schema) => `SELECT * FROM ${schema}.rows`).join(' UNION ALL ')}`;

export const STAGE_COLUMNS = ['k', 'body', ...FACT_COLUMNS, 'name', 'partners', 'activities', 'pdocs', 'pos'] as const;
/** The statement that stages one row (a StagedRow) in `schema`'s rows. */
export const insertStagedRow = (schema: string) => `INSERT INTO ${schema}.rows (${STAGE_COLUMNS.join(', ')}) VALUES (${STAGE_COLUMNS.map(() => '?').join(', ')})`;
/** One establishment as staged, in STAGE_COLUMNS's order. */
export type StagedRow = Array<string | number | bigint | Uint8Array | null>;

/**
 * The per-company files (Empresas, Simples, Sócios) wait in the staging file, or in the rows
 * files of the worker threads that read them, until the establishments are joined with them:
 * appended as they come (keeping a B-tree keyed by root while rows arrive in random order would
 * cost a random write each), each with its place in the release (`pos`: file, then line), then,
 * when the first establishment is read, gathered from every file into one row per root of the
 * staging file: its last company and Simples rows (a later row of a root replaces an earlier
 * one: the greatest of place and row together, both taken in one sort of the company rows) and its
 * partners, one per Sócios line in the files' order (a line staged twice by a resumed import
 * counts once), joined by PARTNER_SEPARATOR (a JSON array escaped every field separator, and cost
 * a third of the gathering). A join is then one probe per root. Rows staged after a gathering (a
 * resumed import reading the rest of a file that had ended early) are gathered into it the same way.
 */
export const companyStageSchema = (schema: string) => `
  CREATE TABLE IF NOT EXISTS ${schema}.company (root TEXT NOT NULL, company TEXT, simples TEXT, pos INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS ${schema}.partner (root TEXT NOT NULL, partner TEXT NOT NULL, pos INTEGER NOT NULL);
`;
/** Between a root's gathered partners (char(2) in companyStageGather): like records.ts's field separator, no registry field holds it. */
export const PARTNER_SEPARATOR = '\u0002';
/** Gathers the rows staged in the files attached as `schemas` (the staging file among them, as `stage`) into `stage.roots`. */
export const companyStageGather = (schemas: string[]) => {
  const all = (table: string) => schemas.map((schema) => `SELECT * FROM ${schema}.${table}`).join(' UNION ALL ');
  return `
  CREATE TABLE IF NOT EXISTS stage.roots (root TEXT PRIMARY KEY, company TEXT, simples TEXT, partners TEXT) WITHOUT ROWID;
  INSERT INTO stage.roots (root, company, simples)
    SELECT root, substr(max(printf('%016d', pos) || company), 17), substr(max(printf('%016d', pos) || simples), 17)
    FROM (${all('company')}) WHERE true GROUP BY root
    ON CONFLICT (root) DO UPDATE SET company = coalesce(excluded.company, roots.company), simples = coalesce(excluded.simples, roots.simples);
  INSERT INTO stage.roots (root, partners)
    SELECT root, group_concat(partner, char(2) ORDER BY pos) FROM (
      SELECT root, partner, pos FROM (${all('partner')}) GROUP BY root, pos
    ) WHERE true GROUP BY root
    ON CONFLICT (root) DO UPDATE SET partners = iif(roots.partners IS NULL, excluded.partners, roots.partners || char(2) || excluded.partners);
  ${schemas.map((schema) => `DELETE FROM ${schema}.company; DELETE FROM ${schema}.partner;`).join('\n  ')}
`;
};
