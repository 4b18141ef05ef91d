/**
 * The custom functions: =PROSPECTA_CNPJ, =PROSPECTA_ENRICH and =PROSPECTA_AI. Sheets recalculates
 * formulas whenever it likes (opening the file, editing an input, copying a column), so a formula
 * must never pay twice for the same input: each answer is kept (paid-results.ts) under a digest of
 * the request, served again on recalculation, and the request carries an `Idempotency-Key`
 * derived from the same digest, so even a lost answer is replayed by the server, not charged. In
 * safe mode (the default) a formula answers only from what is already paid for; "Refresh
 * selected" in the sidebar is then the one thing that spends. A cell error says what to do.
 */
import { normalizeCnpj } from '../../shared/cnpj.ts';
import { ApiCallError, limitOf, type ProspectaClient } from '../api/client.ts';
import { NetworkError } from '../api/http.ts';
import type { InputOf } from '../../shared/operations/index.ts';
import { CNPJ_COLUMNS } from './cnpj-fill.ts';
import { sameLabel } from './columns.ts';
import { FIELD_LABELS } from './enrich-rows.ts';
import { PlainError } from './errors.ts';
import type { PaidResults } from './paid-results.ts';
import type { PropertiesPort } from './ports.ts';
import { NotConfigured } from './runs.ts';

/** A short message for the cell: what is wrong and what to do. */
export class FormulaError extends PlainError {}

export const NOT_PAID_YET = 'Not fetched yet (safe mode): select the cell, then Refresh selected in the prospecta sidebar.';
const SAFE_MODE_KEY = 'prospecta.safeMode';

/** Safe mode is on unless the user turned it off. */
export function safeMode(user: PropertiesPort): boolean {
  return user.get(SAFE_MODE_KEY) !== 'off';
}

export function setSafeMode(user: PropertiesPort, on: boolean): void {
  if (on) user.delete(SAFE_MODE_KEY);
  else user.set(SAFE_MODE_KEY, 'off');
}

export interface FormulaDeps {
  /** The client of the user's settings; NotConfigured when there are none. */
  client(): ProspectaClient;
  paid: PaidResults;
  digest(text: string): string;
  /** Whether a result not yet paid for may be bought now. */
  spend: boolean;
}

/** The cell's value as text: a date as its day, a range as its first cell. */
function text(value: unknown): string {
  if (Array.isArray(value)) return text(value[0]);
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return value === null || value === undefined ? '' : String(value).trim();
}

/** Short words for what the server or the network said. */
function cellError(err: unknown): Error {
  if (err instanceof FormulaError) return err;
  if (err instanceof NotConfigured) return new FormulaError('No API key: open prospecta Settings.');
  if (err instanceof NetworkError) return new FormulaError("Can't reach the prospecta server: try again later.");
  if (!(err instanceof ApiCallError)) return err instanceof Error ? err : new Error(String(err));
  if (err.status === 401) return new FormulaError('API key refused: check it in prospecta Settings.');
  if (err.status === 402) return new FormulaError(err.code === 'plan_required' ? 'No active plan: choose one, then Refresh selected.' : 'Out of credits: top up, then Refresh selected.');
  if (err.status === 429) return new FormulaError('Too many requests: Refresh selected in a minute.');
  if (err.status >= 500) return new FormulaError('The server had a problem: Refresh selected shortly.');
  return new FormulaError(err.message);
}

/**
 * The stored answer for a request (named by its operation and body), bought and stored only when
 * `deps.spend` allows: `buy` sends it with the key derived from the request and says what to keep.
 */
function paidFor(deps: FormulaDeps, operation: string, body: object, buy: (client: ProspectaClient, idempotencyKey: string) => string): string {
  const digest = deps.digest(`${operation}\n${JSON.stringify(body)}`);
  const stored = deps.paid.get(digest);
  if (stored !== null) return stored;
  if (!deps.spend) throw new FormulaError(NOT_PAID_YET);
  let value: string;
  try {
    value = buy(deps.client(), `prospecta-formula-${digest.slice(0, 40)}`);
  } catch (err) {
    throw cellError(err);
  }
  deps.paid.put(digest, value);
  return value;
}

/** The field names a formula takes, in the order of CNPJ_COLUMNS. */
const CNPJ_FIELDS = ['name', 'tradeName', 'status', 'activity', 'city', 'phone', 'email', 'capital', 'size', 'partners'] as const;

function cnpjField(field: unknown): number {
  const wanted = text(field);
  if (!wanted) return 0;
  const index = CNPJ_FIELDS.findIndex((f, i) => sameLabel(f, wanted) || sameLabel(CNPJ_COLUMNS[i]![0], wanted));
  if (index < 0) throw new FormulaError(`Unknown field "${wanted}": use ${CNPJ_FIELDS.join(', ')}.`);
  return index;
}

/** =PROSPECTA_CNPJ(cnpj, [field]) for one cell. */
export function cnpjFormula(deps: FormulaDeps, cnpjCell: unknown, field: unknown): string {
  const raw = text(cnpjCell);
  if (!raw) return '';
  const cnpj = normalizeCnpj(raw);
  if (!cnpj) throw new FormulaError(`"${raw}" is not a CNPJ: check it.`);
  const column = cnpjField(field);
  const body = { cnpjs: [cnpj] };
  const stored = paidFor(deps, 'lookupCnpjBatch', body, (client, key) => {
    const answer = client.call('lookupCnpjBatch', body, key);
    if (answer.invalid.includes(cnpj)) throw new FormulaError(`${raw}: wrong check digits, check the CNPJ.`);
    const company = answer.results[0];
    return JSON.stringify(company ? CNPJ_COLUMNS.map(([, read]) => read(company)) : null);
  });
  const values = JSON.parse(stored) as string[] | null;
  if (!values) throw new FormulaError(`${raw} is not in Brazil's registry.`);
  return values[column] ?? '';
}

type EnrichField = keyof typeof FIELD_LABELS;

/** The identifier's field of the enrich body, from what it looks like. */
function identify(id: string): Partial<InputOf<'enrich'>> {
  if (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(id)) return { email: id };
  if (/linkedin\.com\//i.test(id)) return { linkedinUrl: /^https?:\/\//i.test(id) ? id : `https://${id}` };
  const cnpj = normalizeCnpj(id);
  if (cnpj) return { cnpj };
  const domain = /^(?:https?:\/\/)?(?:www\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)+)\/?$/i.exec(id);
  if (domain) return { companyDomain: domain[1]!.toLowerCase() };
  return { companyName: id };
}

function enrichField(field: unknown, input: Partial<InputOf<'enrich'>>): EnrichField {
  const wanted = text(field);
  if (!wanted) return input.email ? 'fullName' : input.linkedinUrl ? 'email' : input.companyDomain ? 'companyName' : 'companyDomain';
  const found = Object.entries(FIELD_LABELS).find(([name, label]) => sameLabel(name, wanted) || sameLabel(label, wanted));
  if (!found) throw new FormulaError(`Unknown field "${wanted}": use e.g. email, phone, title, linkedinUrl, companyDomain.`);
  return found[0];
}

/** =PROSPECTA_ENRICH(identifier, [field]) for one cell. */
export function enrichFormula(deps: FormulaDeps, identifierCell: unknown, field: unknown): string {
  const id = text(identifierCell);
  if (!id) return '';
  const input = identify(id);
  const wanted = enrichField(field, input);
  const body = { ...input, goalFields: [wanted] } as InputOf<'enrich'>;
  return JSON.parse(
    paidFor(deps, 'enrich', body, (client, key) => {
      const value = (client.call('enrich', body, key).record as Record<string, unknown>)[wanted];
      return JSON.stringify(value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));
    }),
  ) as string;
}

/** =PROSPECTA_AI(instruction, context…) for one row of context. */
export function aiFormula(deps: FormulaDeps, instructionCell: unknown, context: unknown[]): string {
  const instruction = text(instructionCell);
  if (!instruction) throw new FormulaError('Write an instruction, e.g. =PROSPECTA_AI("industry in two words", A2).');
  const cells = context.flatMap((c) => (Array.isArray(c) ? c.flat(2) : [c])).map(text).filter(Boolean);
  const max = limitOf('aiColumn', '*', 'maxLength');
  const body = { instruction, ...Object.fromEntries(cells.map((c, i) => [`context ${i + 1}`, c.slice(0, max)])) } as InputOf<'aiColumn'>;
  return JSON.parse(paidFor(deps, 'aiColumn', body, (client, key) => JSON.stringify(client.call('aiColumn', body, key).value))) as string;
}

/**
 * One custom function's answer: a cell, or for a range a grid of the same shape, each cell
 * answered on its own (a grid cannot hold errors, so a cell's problem is written as `✗ …`).
 * `deadline` keeps a long range within the 30 seconds Apps Script gives a custom function.
 */
export function perCell(input: unknown, one: (cell: unknown) => string, now: () => number, deadline: number): string | string[][] {
  if (!Array.isArray(input)) return one(input);
  return (input as unknown[][]).map((row) =>
    row.map((cell) => {
      if (now() > deadline) return `✗ ${NOT_PAID_YET}`;
      try {
        return one(cell);
      } catch (err) {
        if (!(err instanceof PlainError)) throw err;
        return `✗ ${err.message}`;
      }
    }),
  );
}
