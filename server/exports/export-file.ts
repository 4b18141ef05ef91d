/**
 * How an export writes a company: one NDJSON line, or one CSV row under a header derived once from
 * the registry's Company schema (the search's fields, nested objects flattened to dotted names:
 * `address.city`, `mainActivity.code`). The columns come from the schema rather than from the rows,
 * so every file of every filter has the same header, whatever its first row holds.
 *
 * A cell is RFC 4180: quoted when it holds a comma, a quote or a line break, quotes doubled. A
 * spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula (also after a tab or
 * a carriage return), so such a cell is written with a leading `'` (OWASP's advice for CSV
 * injection): a registry name or a partner's name is data, never code. A list of plain values is
 * one cell, its values joined by `; `; a list of records (partners, secondary activities, tax
 * regimes) is one cell of JSON.
 */
import type { TSchema } from '@sinclair/typebox';
import { Company } from '../../shared/schemas/companies.ts';
import type { ExportFormat } from '../../shared/schemas/exports.ts';
import type { CompanyView } from '../companies/company-record.ts';

type Column = { name: string; path: string[] };

/** The object schema inside `schema`, when it is one or a nullable one. */
function objectOf(schema: TSchema): TSchema | null {
  if (schema.type === 'object' && schema.properties) return schema;
  const union = schema.anyOf as TSchema[] | undefined;
  return union?.find((member) => member.type === 'object' && member.properties) ?? null;
}

function columnsOf(schema: TSchema, prefix: string[] = []): Column[] {
  return Object.entries(schema.properties as Record<string, TSchema>).flatMap(([name, property]) => {
    const path = [...prefix, name];
    const nested = objectOf(property);
    return nested ? columnsOf(nested, path) : [{ name: path.join('.'), path }];
  });
}

export const CSV_COLUMNS: readonly Column[] = columnsOf(Company);

/** OWASP's list: the four a formula starts with, and a tab or carriage return that some spreadsheets skip before one. */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One CSV cell: neutralised if a spreadsheet would run it, quoted if it must be. */
export function csvCell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) text = value.every((v) => v === null || typeof v !== 'object') ? value.join('; ') : JSON.stringify(value);
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function valueAt(company: CompanyView, path: string[]): unknown {
  let value: unknown = company;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** What a file of `format` starts with: the CSV header row, or nothing. */
export function fileStart(format: ExportFormat): string {
  return format === 'csv' ? `${CSV_COLUMNS.map((column) => csvCell(column.name)).join(',')}\r\n` : '';
}

/** One company as a line of the file, its line break included. */
export function fileLine(format: ExportFormat, company: CompanyView): string {
  if (format === 'ndjson') return `${JSON.stringify(company)}\n`;
  return `${CSV_COLUMNS.map((column) => csvCell(valueAt(company, column.path))).join(',')}\r\n`;
}
