/**
 * `prospecta import people`: a CSV of people (an export from a CRM, LinkedIn or a spreadsheet)
 * into a workspace's lists. Columns are recognised by their header in English, Portuguese or
 * Spanish, case- and accent-insensitively; the file is streamed (split as the registry import
 * splits its files, never holding a row past MAX_ROW_CHARS), written in batches, and every row
 * that cannot be used (a cell past MAX_CELL_CHARS included) is reported with its line. Importing the same file again updates the
 * same people (see personId).
 */
import { createReadStream } from 'node:fs';
import { headerMeaning } from '../../shared/column-headers.ts';
import { foldText } from '../../shared/fold-text.ts';
import { EMAIL_STATUSES } from '../../shared/schemas/search.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import { CsvSplitter, MAX_ROW_CHARS, type SplitRow } from '../receita/import/csv-splitter.ts';
import type { Problem } from '../receita/import/rows.ts';
import { personDocument, type People, type PersonDoc, type PersonRecord } from './people.ts';
import { seniorityOfTitle } from './seniority.ts';

type Column = keyof PersonRecord;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const BATCH = 500;
/**
 * The longest cell kept: far beyond any name, title or list of skills, and short of a 16 MiB
 * "name" that a search would then answer for a credit. A longer one skips its row, reported.
 */
export const MAX_CELL_CHARS = 2_000;

export interface PeopleImportSummary {
  workspaceId: string;
  list: string;
  file: string;
  columns: Record<string, string>;
  rows: number;
  inserted: number;
  updated: number;
  problems: number;
}

export class PeopleFileError extends Error {}

/** The field each header stands for, and the headers no field claims. */
export function mapHeaders(headers: string[]): { fields: Array<Column | null>; ignored: string[] } {
  const taken = new Set<Column>();
  const fields = headers.map((header) => {
    const meaning = headerMeaning(header);
    // A CNPJ column is kept by the registry, not by a person's record.
    const field = meaning && meaning !== 'cnpj' ? meaning : null;
    if (!field || taken.has(field)) return null;
    taken.add(field);
    return field;
  });
  return { fields, ignored: headers.filter((h, i) => h.trim() !== '' && fields[i] === null) };
}

const clean = (value: string | undefined) => (value?.trim() ? value.trim() : null);

/**
 * The full name of a row. A "name" column beside a last-name column and no first-name column is
 * a first name (`Nome` + `Sobrenome`, `Nombre` + `Apellido`), unless it already ends with the
 * last name (a full name next to a redundant surname column).
 */
function fullName(name: string | null, firstName: string | null, lastName: string | null): { name: string | null; firstName: string | null } {
  if (name && lastName && !firstName && !foldText(name).endsWith(foldText(lastName))) return { name: `${name} ${lastName}`, firstName: name };
  return { name: name ?? ([firstName, lastName].filter(Boolean).join(' ') || null), firstName };
}

/** One CSV row as a person, or why it cannot be one. */
export function personOf(values: Partial<Record<Column, string>>): PersonRecord | string {
  const lastName = clean(values.lastName);
  const { name, firstName } = fullName(clean(values.name), clean(values.firstName), lastName);
  if (!name) return 'no name';
  const email = clean(values.email)?.toLowerCase() ?? null;
  if (email && !EMAIL.test(email)) return `"${email}" is not an email address`;
  const listed = clean(values.emailStatus)?.toLowerCase() ?? null;
  if (listed && !(EMAIL_STATUSES as readonly string[]).includes(listed)) {
    return `email status "${listed}" must be one of: ${EMAIL_STATUSES.join(', ')}`;
  }
  const size = clean(values.companySize)?.replace(/[.,\s]/g, '').match(/\d+/);
  const domain = clean(values.domain);
  const title = clean(values.title);
  const many = (field: Column) => (values[field] ?? '').split(/[;,|]/).map((v) => v.trim()).filter(Boolean);
  return {
    name,
    firstName: firstName ?? name.split(/\s+/)[0] ?? null,
    lastName: lastName ?? (name.includes(' ') ? name.split(/\s+/).slice(1).join(' ') : null),
    title,
    seniority: clean(values.seniority)?.toLowerCase() ?? seniorityOfTitle(title),
    department: clean(values.department)?.toLowerCase() ?? null,
    email,
    emailStatus: email ? (listed ?? 'unverified') : 'unavailable',
    phone: clean(values.phone),
    linkedinUrl: clean(values.linkedinUrl),
    company: clean(values.company),
    domain: domain ? normalizeDomain(domain) : null,
    industry: clean(values.industry),
    companySize: size ? Number(size[0]) : null,
    companyLocation: clean(values.companyLocation),
    location: clean(values.location),
    country: clean(values.country),
    revenueRange: clean(values.revenueRange),
    skills: many('skills'),
    technologies: many('technologies'),
    languages: many('languages'),
  };
}

export async function importPeople(
  people: People,
  options: { workspaceId: string; file: string; list: string; onProblem?: (problem: Problem) => void },
): Promise<PeopleImportSummary> {
  const { workspaceId, file, list } = options;
  let problems = 0;
  const report = (line: number | undefined, message: string) => {
    problems++;
    options.onProblem?.({ file, ...(line ? { line } : {}), message });
  };
  let fields: Array<Column | null> | undefined;
  let columns: Record<string, string> = {};
  let batch: PersonDoc[] = [];
  const summary = { rows: 0, inserted: 0, updated: 0 };
  const flush = async () => {
    const written = await people.upsert(batch);
    summary.inserted += written.inserted;
    summary.updated += written.updated;
    batch = [];
  };

  let line = 1;
  try {
    for await (const { cells: row, line: at, malformed } of csvRows(file)) {
      line = at;
      if (!malformed && row.every((cell) => cell.trim() === '')) continue;
      if (malformed) {
        // An unclosed quote swallows the lines after it into one cell: none of it is a person.
        report(line, `${malformed}; row skipped`);
        if (fields) summary.rows++;
        continue;
      }
      if (!fields) {
        const headers = row.map((h, i) => (i === 0 ? h.replace(/^\uFEFF/, '') : h));
        const mapped = mapHeaders(headers);
        if (!mapped.fields.includes('name') && !mapped.fields.includes('firstName')) {
          throw new PeopleFileError(`${file}: no name column (name, full name, nome, nombre, first name…) in the header: ${headers.join(', ')}`);
        }
        fields = mapped.fields;
        columns = Object.fromEntries(headers.flatMap((h, i) => (fields![i] ? [[h, fields![i]!]] : [])));
        for (const header of mapped.ignored) report(line, `column "${header}" is not recognised; ignored`);
        continue;
      }
      summary.rows++;
      const values: Partial<Record<Column, string>> = {};
      row.forEach((value, i) => {
        const field = fields![i];
        if (field) values[field] = value;
      });
      const long = Object.entries(values).find(([, value]) => value.length > MAX_CELL_CHARS);
      if (long) {
        const header = Object.keys(columns).find((h) => columns[h] === long[0]) ?? long[0];
        report(line, `column "${header}" holds ${long[1].length.toLocaleString('en')} characters, more than ${MAX_CELL_CHARS.toLocaleString('en')}; row skipped`);
        continue;
      }
      const person = personOf(values);
      if (typeof person === 'string') {
        report(line, `${person}; row skipped`);
        continue;
      }
      batch.push(personDocument(workspaceId, list, person));
      if (batch.length === BATCH) await flush();
    }
  } catch (err) {
    if (err instanceof PeopleFileError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new PeopleFileError(`${file}: no such file`);
    report(line, `the file could not be read further: ${(err as Error).message}`);
  }
  if (!fields) throw new PeopleFileError(`${file}: the file is empty`);
  await flush();
  return { workspaceId, list, file, columns, ...summary, problems };
}

interface CsvRow {
  cells: string[];
  /** The line the row starts on (a quoted cell may span lines). */
  line: number;
  /** What is wrong with the row as a whole, if anything: it is then skipped. */
  malformed: string | null;
}

const UNCLOSED_QUOTE = 'a quoted field is not closed (an unbalanced quote), so the rest of the file was read as one cell';
const DELIMITERS = [',', ';', '\t', '|'];

/** The delimiter the header uses most, outside quotes (a CRM's export may use any of these); `,` when none. */
export function guessDelimiter(header: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const c of header) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && counts.has(c)) counts.set(c, counts.get(c)! + 1);
  }
  let best = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

/**
 * The rows of a CSV file, streamed through the registry import's splitter, each with its line
 * and what makes it unusable. A row longer than MAX_ROW_CHARS (a 16 MiB cell, a line without a
 * break, a quote never closed) is never held whole: the splitter drops it up to its next line
 * break, and it comes here as a malformed row at its line, in order with the others.
 */
async function* csvRows(file: string): AsyncGenerator<CsvRow> {
  const input = createReadStream(file, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  let splitter: CsvSplitter | null = null;
  let head = '';
  const overlong: number[] = [];
  const start = (header: string) =>
    new CsvSplitter(guessDelimiter(header), { maxRowChars: MAX_ROW_CHARS, onOverlong: (line) => overlong.push(line) });
  /** The rows and the dropped rows of one piece, by line. */
  function* inOrder(rows: SplitRow[]): Generator<CsvRow> {
    const dropped = overlong.splice(0);
    for (const row of rows) {
      while (dropped.length > 0 && dropped[0]! < row.line) yield tooLong(dropped.shift()!);
      yield { cells: row.fields, line: row.line, malformed: row.unclosedQuote ? UNCLOSED_QUOTE : null };
    }
    for (const line of dropped) yield tooLong(line);
  }
  for await (const chunk of input as AsyncIterable<string>) {
    if (splitter) {
      yield* inOrder(splitter.push(chunk));
      continue;
    }
    // The delimiter is guessed from the header line, once it is in (or the row limit reached).
    head += chunk;
    const lineEnd = head.indexOf('\n');
    if (lineEnd < 0 && head.length <= MAX_ROW_CHARS) continue;
    splitter = start(lineEnd < 0 ? head.slice(0, MAX_ROW_CHARS) : head.slice(0, lineEnd));
    yield* inOrder(splitter.push(head));
    head = '';
  }
  splitter ??= start(head);
  yield* inOrder(splitter.push(head, true));
}

const tooLong = (line: number): CsvRow => ({
  cells: [],
  line,
  malformed: `the row is longer than ${MAX_ROW_CHARS.toLocaleString('en')} characters (a line without a break, or a quote never closed)`,
});
