/**
 * The Receita's columns turned into prospecta's fields. Codes become descriptions through the
 * release's own lookup tables (joined loosely: real releases use codes their tables lack, so a
 * missing code keeps its code with a null description), dates become ISO dates or null, and
 * the capital's comma decimal becomes a number.
 */
import type { CodeAndDescription, CompanyRecord, Partner, RegistrationStatus } from '../../companies/company-record.ts';
import type { PhoneNumber, TaxOption } from '../../../shared/types.ts';
import type { LookupKind } from './release-files.ts';
import { AGE_BAND_CODES, COMPANY_SIZE_CODES, PARTNER_TYPE_CODES, type FixedCodeTable } from '../../../shared/registry-codes.ts';

export type Lookups = Record<LookupKind, Map<string, string>>;

/**
 * What the per-company files (Empresas, Simples, Sócios) say about a root, as their raw fields
 * (after the root, joined by {@link FIELD_SEPARATOR}): compact while they wait in staging, and
 * turned into fields only where the documents are built (possibly a worker thread).
 */
export interface RootData {
  company?: string;
  simples?: string;
  partners?: string[];
}

/** Joins the raw fields of a staged row; no registry field holds it. */
export const FIELD_SEPARATOR = '\u0001';

/** Per table, the rows that carried a code the table lacks (kept as the code, described as null). */
export type UnknownCodes = Record<string, number>;

/** What an import builds of an establishment: its tax regimes live in a collection of their own, joined when read. */
export type EstablishmentRecord = Omit<CompanyRecord, 'release' | 'taxRegimes'>;

/**
 * Codes to code-and-description: the release's own tables, or the layout's fixed lists
 * (shared/registry-codes.ts). With `unknown`, each code a table lacks is counted under the
 * table's name; a code is never dropped for being unknown.
 */
export class Codes {
  constructor(
    readonly lookups: Lookups,
    private readonly unknown: UnknownCodes | null = null,
  ) {}

  release(kind: LookupKind, code: string, width: number): CodeAndDescription | null {
    return this.describe(kind, this.lookups[kind], code, width);
  }

  fixed(name: string, table: FixedCodeTable, code: string, width: number): CodeAndDescription | null {
    return this.describe(name, table, code, width);
  }

  private describe(
    name: string,
    table: ReadonlyMap<string, string> | FixedCodeTable,
    code: string,
    width: number,
  ): CodeAndDescription | null {
    const trimmed = code.trim();
    if (trimmed === '') return null;
    const padded = trimmed.padStart(width, '0');
    const description = (table instanceof Map ? table.get(padded) : (table as FixedCodeTable)[padded]) ?? null;
    if (description === null && this.unknown) this.unknown[name] = (this.unknown[name] ?? 0) + 1;
    return { code: padded, description };
  }
}

/** Adds one count of unknown codes into another. */
export function addUnknown(into: UnknownCodes, from: UnknownCodes): void {
  for (const [table, count] of Object.entries(from)) into[table] = (into[table] ?? 0) + count;
}

export const COLUMNS = {
  empresas: 7,
  estabelecimentos: 30,
  socios: 11,
  simples: 7,
  lookup: 2,
} as const;

const STATUSES: Record<string, RegistrationStatus> = { '1': 'NULA', '2': 'ATIVA', '3': 'SUSPENSA', '4': 'INAPTA', '8': 'BAIXADA' };
// From the code table, not the schemas: the import's worker threads need not load TypeBox.
const SIZES = new Set<string>(Object.keys(COMPANY_SIZE_CODES));
const ROOT = /^[0-9A-Z]{8}$/;
/** A partner without a legal representative carries this masked CPF and qualification `00` (97% of Sócios rows). */
const NO_REPRESENTATIVE = '***000000**';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `YYYYMMDD` as `YYYY-MM-DD`; null for the nulls (``, `0`, `00000000`) and for impossible dates (seen: years 202 and 4100). */
export function isoDate(value: string): string | null {
  if (value.length !== 8) return null;
  // Eight digits, as nearly every date is, are read without slicing them into numbers.
  let digits = 0;
  while (digits < 8 && value.charCodeAt(digits) >= 0x30 && value.charCodeAt(digits) <= 0x39) digits++;
  if (digits < 8) return readDate(value);
  const d = (at: number) => value.charCodeAt(at) - 0x30;
  const year = d(0) * 1000 + d(1) * 100 + d(2) * 10 + d(3);
  const month = d(4) * 10 + d(5);
  const day = d(6) * 10 + d(7);
  if (!(year >= 1800 && year <= 2100 && month >= 1 && month <= 12 && day >= 1)) return null;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
}

function readDate(value: string): string | null {
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(4, 6));
  const day = Number(value.slice(6, 8));
  if (!(year >= 1800 && year <= 2100 && month >= 1 && month <= 12 && day >= 1)) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
}

/** The published form, `15000,00`, with thousands dots (`1.500,00`) though none were seen. */
const COMMA_DECIMAL = /^(\d+|\d{1,3}(\.\d{3})+)(,\d+)?$/;
/** A file re-saved by a spreadsheet: `15000.00`, the dot a decimal point (two places at most, so never a thousands dot). */
const DOT_DECIMAL = /^\d+\.\d{1,2}$/;

/** `15000,00` as 15000; null for anything else that is not a plain amount (`0x1F`, `1e6`). */
export function capital(value: string): number | null {
  if (DOT_DECIMAL.test(value)) return Number(value);
  if (!COMMA_DECIMAL.test(value)) return null;
  const number = Number(value.replaceAll('.', '').replace(',', '.'));
  return Number.isFinite(number) ? number : null;
}

/** `S`, `N` or empty ("other"). */
function option(value: string): boolean | null {
  const v = value.trim();
  return v === 'S' ? true : v === 'N' ? false : null;
}

function text(value: string | undefined): string | null {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return null;
  // Real releases hold runs of spaces inside names; they carry no meaning.
  return trimmed.includes('  ') ? trimmed.replace(/\s{2,}/g, ' ') : trimmed;
}

function digits(value: string): string {
  return value.replace(/\D/g, '');
}

function phoneNumber(ddd: string, number: string): PhoneNumber | null {
  const n = digits(number);
  if (n === '') return null;
  const area = digits(ddd);
  return { areaCode: area === '' ? null : area, number: n };
}

export function validRoot(root: string): boolean {
  return ROOT.test(root);
}

/** An Empresas row, staged as its raw fields (RootData's `company`); its codes are counted against the tables here. */
export function empresa(f: string[], codes: Codes): string {
  codes.release('naturezas', f[2]!, 4);
  codes.release('qualificacoes', f[3]!, 2);
  codes.fixed('porte', COMPANY_SIZE_CODES, f[5]!, 2);
  return f.slice(1).join(FIELD_SEPARATOR);
}

/** A Simples row, staged as its raw fields (RootData's `simples`). */
export function simples(f: string[]): string {
  return f.slice(1).join(FIELD_SEPARATOR);
}

/** A Sócios row, staged as its raw fields; its codes are counted against the tables here. */
export function socio(f: string[], codes: Codes): string {
  partner(f.slice(1), codes);
  return f.slice(1).join(FIELD_SEPARATOR);
}

/**
 * A Sócios row's fields after the root: `identificador_socio`, name, document, qualification,
 * entry date, country, representative's CPF, name and qualification, age band.
 */
export function partner(f: string[], codes: Codes): Partner {
  const qualification = codes.release('qualificacoes', f[3] ?? '', 2);
  const representativeDocument = text(f[6]);
  const representativeQualification = (f[8] ?? '').trim();
  const hasRepresentative =
    (representativeDocument !== null && representativeDocument !== NO_REPRESENTATIVE) ||
    text(f[7]) !== null ||
    (representativeQualification !== '' && Number(representativeQualification) !== 0);
  return {
    name: text(f[1]) ?? '',
    document: text(f[2]),
    qualification: qualification?.description ?? null,
    since: isoDate((f[4] ?? '').trim()),
    type: codes.fixed('identificador_socio', PARTNER_TYPE_CODES, f[0] ?? '', 1),
    qualificationCode: qualification?.code ?? null,
    country: codes.release('paises', f[5] ?? '', 3),
    ageBand: codes.fixed('faixa_etaria', AGE_BAND_CODES, f[9] ?? '', 1),
    legalRepresentative: hasRepresentative
      ? {
          document: representativeDocument,
          name: text(f[7]),
          qualification: codes.release('qualificacoes', representativeQualification, 2),
        }
      : null,
  };
}

/** The Simples row's fields after the root: Simples option, its date, exclusion; MEI the same. */
function taxOptions(raw: string | undefined): { simples: TaxOption | null; mei: TaxOption | null } {
  if (raw === undefined) return { simples: null, mei: null };
  const f = raw.split(FIELD_SEPARATOR);
  const taxOption = (at: number): TaxOption => ({
    option: option(f[at] ?? ''),
    since: isoDate((f[at + 1] ?? '').trim()),
    until: isoDate((f[at + 2] ?? '').trim()),
  });
  return { simples: taxOption(0), mei: taxOption(3) };
}

/** The staged Empresas fields after the root: name, legal nature, responsible's qualification, capital, size, federative entity. */
function companyFields(raw: string | undefined, codes: Codes) {
  if (raw === undefined) return undefined;
  const f = raw.split(FIELD_SEPARATOR);
  const sizeCode = (f[4] ?? '').trim().padStart(2, '0');
  return {
    name: text(f[0]) ?? '',
    legalNature: codes.release('naturezas', f[1] ?? '', 4),
    responsibleQualification: codes.release('qualificacoes', f[2] ?? '', 2),
    capital: capital((f[3] ?? '').trim()),
    fiscalSize: SIZES.has(sizeCode) ? (sizeCode as CompanyRecord['fiscalSize']) : null,
    size: codes.fixed('porte', COMPANY_SIZE_CODES, f[4] ?? '', 2),
    federativeEntity: text(f[5]),
  };
}

/**
 * An Estabelecimentos row joined with its root's data; the caller has checked the CNPJ. `codes`
 * counts the unknown codes of the establishment's own fields; its root's were counted when staged.
 */
export function establishment(
  f: string[],
  cnpj: string,
  root: RootData | undefined,
  codes: Codes,
): EstablishmentRecord {
  const quiet = new Codes(codes.lookups);
  const company = companyFields(root?.company, quiet);
  const options = taxOptions(root?.simples);
  const phone1 = phoneNumber(f[21]!, f[22]!);
  const phone2 = phoneNumber(f[23]!, f[24]!);
  const phones: string[] = [];
  for (const phone of [phone1, phone2]) if (phone) phones.push((phone.areaCode ?? '') + phone.number);
  const state = text(f[19]!);
  const abroad = state === 'EX';
  const municipality = codes.release('municipios', f[20]!, 4);
  const city = abroad ? text(f[8]!) : (municipality?.description ?? null);
  const country = codes.release('paises', f[9]!, 3);
  const street = [text(f[13]!), text(f[14]!)].filter(Boolean).join(' ');
  const zip = digits(f[18]!);
  const secondary = f[12]!.trim();
  const status = f[5]!.trim();
  const registrationStatus = status === '' ? null : (STATUSES[String(Number(status))] ?? null);
  if (status !== '' && registrationStatus === null) codes.fixed('situacao_cadastral', {}, status, 2);
  return {
    cnpj,
    root: cnpj.slice(0, 8),
    // An establishment whose company row is missing still has its trade name.
    name: company?.name || text(f[4]!) || '',
    tradeName: text(f[4]!),
    establishment: f[3]!.trim() === '1' ? 'MATRIZ' : f[3]!.trim() === '2' ? 'FILIAL' : null,
    registrationStatus,
    registrationStatusDate: isoDate(f[6]!.trim()),
    registrationStatusReason: codes.release('motivos', f[7]!, 2),
    openingDate: isoDate(f[10]!.trim()),
    mainActivity: codes.release('cnaes', f[11]!, 7),
    secondaryActivities:
      secondary === '' ? [] : secondary.split(',').flatMap((code) => codes.release('cnaes', code, 7) ?? []),
    legalNature: company?.legalNature ?? null,
    capital: company?.capital ?? null,
    fiscalSize: company?.fiscalSize ?? null,
    simplesOption: options.simples?.option ?? null,
    meiOption: options.mei?.option ?? null,
    size: company?.size ?? null,
    responsibleQualification: company?.responsibleQualification ?? null,
    federativeEntity: company?.federativeEntity ?? null,
    specialSituation: text(f[28]!),
    specialSituationDate: isoDate(f[29]!.trim()),
    phone1,
    phone2,
    fax: phoneNumber(f[25]!, f[26]!),
    foreignCity: text(f[8]!),
    country,
    simples: options.simples,
    mei: options.mei,
    address: {
      street: street === '' ? null : street,
      number: text(f[15]!),
      complement: text(f[16]!),
      district: text(f[17]!),
      // About 0.1% of CEPs lost their leading zero.
      zipCode: zip === '' ? null : zip.padStart(8, '0'),
      city,
      cityCode: abroad ? null : (text(f[20]!)?.padStart(4, '0') ?? null),
      state,
      country: country?.description ?? null,
    },
    phones,
    email: text(f[27]!),
    partners: (root?.partners ?? []).map((row) => partner(row.split(FIELD_SEPARATOR), quiet)),
  };
}
