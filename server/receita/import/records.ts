/**
 * The Receita's columns turned into prospecta's fields. Codes become descriptions through the
 * release's own lookup tables (joined loosely: real releases use codes their tables lack, so a
 * missing code keeps its code with a null description), dates become ISO dates or null, and
 * the capital's comma decimal becomes a number.
 */
import type { CodeAndDescription, CompanyRecord, Partner, RegistrationStatus } from '../company-record.ts';
import type { LookupKind } from './release-files.ts';
import { STORED_FISCAL_SIZES } from '../../../shared/schemas/registry.ts';

export type Lookups = Record<LookupKind, Map<string, string>>;

/** What the per-company files (Empresas, Simples, Sócios) say about a root. */
export interface RootData {
  name?: string;
  legalNature?: CodeAndDescription | null;
  capital?: number | null;
  fiscalSize?: CompanyRecord['fiscalSize'];
  simplesOption?: boolean | null;
  meiOption?: boolean | null;
  partners?: Partner[];
}

export const COLUMNS = {
  empresas: 7,
  estabelecimentos: 30,
  socios: 11,
  simples: 7,
  lookup: 2,
} as const;

const STATUSES: Record<string, RegistrationStatus> = { '1': 'NULA', '2': 'ATIVA', '3': 'SUSPENSA', '4': 'INAPTA', '8': 'BAIXADA' };
const SIZES = new Set<string>(STORED_FISCAL_SIZES);
const ROOT = /^[0-9A-Z]{8}$/;

/** `YYYYMMDD` as `YYYY-MM-DD`; null for the nulls (``, `0`, `00000000`) and for impossible dates (seen: years 202 and 4100). */
export function isoDate(value: string): string | null {
  if (value.length !== 8) return null;
  const year = Number(value.slice(0, 4));
  const month = Number(value.slice(4, 6));
  const day = Number(value.slice(6, 8));
  if (!(year >= 1800 && year <= 2100 && month >= 1 && month <= 12 && day >= 1)) return null;
  if (day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return null;
  return `${value.slice(0, 4)}-${value.slice(4, 6)}-${value.slice(6, 8)}`;
}

/** `15000,00` as 15000; a thousands dot, though never seen, is dropped rather than misread. */
export function capital(value: string): number | null {
  if (value === '') return null;
  const number = Number(value.replaceAll('.', '').replace(',', '.'));
  return Number.isFinite(number) && number >= 0 ? number : null;
}

/** `S`, `N` or empty ("other"). */
function option(value: string): boolean | null {
  return value === 'S' ? true : value === 'N' ? false : null;
}

function text(value: string): string | null {
  const trimmed = value.trim();
  if (trimmed === '') return null;
  // Real releases hold runs of spaces inside names; they carry no meaning.
  return trimmed.includes('  ') ? trimmed.replace(/\s{2,}/g, ' ') : trimmed;
}

function coded(lookups: Map<string, string>, code: string, width: number): CodeAndDescription | null {
  const trimmed = code.trim();
  if (trimmed === '') return null;
  const padded = trimmed.padStart(width, '0');
  return { code: padded, description: lookups.get(padded) ?? null };
}

function digits(value: string): string {
  return value.replace(/\D/g, '');
}

export function validRoot(root: string): boolean {
  return ROOT.test(root);
}

export function empresa(f: string[], lookups: Lookups): RootData {
  const size = f[5]!.trim().padStart(2, '0');
  return {
    name: text(f[1]!) ?? '',
    legalNature: coded(lookups.naturezas, f[2]!, 4),
    capital: capital(f[4]!.trim()),
    fiscalSize: SIZES.has(size) ? (size as CompanyRecord['fiscalSize']) : null,
  };
}

export function simples(f: string[]): RootData {
  return { simplesOption: option(f[1]!.trim()), meiOption: option(f[4]!.trim()) };
}

export function socio(f: string[], lookups: Lookups): Partner {
  return {
    name: text(f[2]!) ?? '',
    document: text(f[3]!),
    qualification: coded(lookups.qualificacoes, f[4]!, 2)?.description ?? null,
    since: isoDate(f[5]!.trim()),
  };
}

/** An Estabelecimentos row joined with its root's data; the caller has checked the CNPJ. */
export function establishment(
  f: string[],
  cnpj: string,
  root: RootData | undefined,
  lookups: Lookups,
): Omit<CompanyRecord, 'release'> {
  const phones: string[] = [];
  for (const [ddd, number] of [
    [f[21]!, f[22]!],
    [f[23]!, f[24]!],
  ] as const) {
    const phone = digits(ddd) + digits(number);
    if (digits(number) !== '') phones.push(phone);
  }
  const state = text(f[19]!);
  const abroad = state === 'EX';
  const city = abroad ? text(f[8]!) : (coded(lookups.municipios, f[20]!, 4)?.description ?? null);
  const street = [text(f[13]!), text(f[14]!)].filter(Boolean).join(' ');
  const zip = digits(f[18]!);
  const secondary = f[12]!.trim();
  return {
    cnpj,
    root: cnpj.slice(0, 8),
    // An establishment whose company row is missing still has its trade name.
    name: root?.name || text(f[4]!) || '',
    tradeName: text(f[4]!),
    establishment: f[3]!.trim() === '1' ? 'MATRIZ' : f[3]!.trim() === '2' ? 'FILIAL' : null,
    registrationStatus: STATUSES[String(Number(f[5]!.trim()))] ?? null,
    registrationStatusDate: isoDate(f[6]!.trim()),
    registrationStatusReason: coded(lookups.motivos, f[7]!, 2),
    openingDate: isoDate(f[10]!.trim()),
    mainActivity: coded(lookups.cnaes, f[11]!, 7),
    secondaryActivities:
      secondary === '' ? [] : secondary.split(',').flatMap((code) => coded(lookups.cnaes, code, 7) ?? []),
    legalNature: root?.legalNature ?? null,
    capital: root?.capital ?? null,
    fiscalSize: root?.fiscalSize ?? null,
    simplesOption: root?.simplesOption ?? null,
    meiOption: root?.meiOption ?? null,
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
      country: text(f[9]!) === null ? null : (coded(lookups.paises, f[9]!, 3)?.description ?? null),
    },
    phones,
    email: text(f[27]!),
    partners: root?.partners ?? [],
  };
}
