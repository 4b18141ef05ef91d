/**
 * `prospecta import people`: a CSV of people (an export from a CRM, LinkedIn or a spreadsheet)
 * into a workspace's lists. Columns are recognised by their header in English, Portuguese or
 * Spanish, case- and accent-insensitively; the file is streamed, written in batches, and every
 * row that cannot be used is reported with its line. Importing the same file again updates the
 * same people (see personId).
 */
import { createReadStream } from 'node:fs';
import Papa from 'papaparse';
import { headerMeaning } from '../../shared/column-headers.ts';
import { EMAIL_STATUSES } from '../../shared/schemas/search.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import type { Problem } from '../receita/import/rows.ts';
import { personDocument, type People, type PersonDoc, type PersonRecord } from './people.ts';

type Column = keyof PersonRecord;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const BATCH = 500;

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

/** One CSV row as a person, or why it cannot be one. */
export function personOf(values: Partial<Record<Column, string>>): PersonRecord | string {
  const firstName = clean(values.firstName);
  const lastName = clean(values.lastName);
  const name = clean(values.name) ?? ([firstName, lastName].filter(Boolean).join(' ') || null);
  if (!name) return 'no name';
  const email = clean(values.email)?.toLowerCase() ?? null;
  if (email && !EMAIL.test(email)) return `"${email}" is not an email address`;
  const listed = clean(values.emailStatus)?.toLowerCase() ?? null;
  if (listed && !(EMAIL_STATUSES as readonly string[]).includes(listed)) {
    return `email status "${listed}" must be one of: ${EMAIL_STATUSES.join(', ')}`;
  }
  const size = clean(values.companySize)?.replace(/[.,\s]/g, '').match(/\d+/);
  const domain = clean(values.domain);
  const many = (field: Column) => (values[field] ?? '').split(/[;,|]/).map((v) => v.trim()).filter(Boolean);
  return {
    name,
    firstName: firstName ?? name.split(/\s+/)[0] ?? null,
    lastName: lastName ?? (name.includes(' ') ? name.split(/\s+/).slice(1).join(' ') : null),
    title: clean(values.title),
    seniority: clean(values.seniority)?.toLowerCase() ?? null,
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
  const parser = Papa.parse(Papa.NODE_STREAM_INPUT, { delimitersToGuess: [',', ';', '\t', '|'] });
  const input = createReadStream(file, 'utf8');
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);

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

  let next = 1;
  let line = 1;
  try {
    for await (const row of parser as AsyncIterable<string[]>) {
      line = next;
      // A quoted cell may span lines; the next row starts after them.
      next += 1 + row.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
      if (row.every((cell) => cell.trim() === '')) continue;
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
