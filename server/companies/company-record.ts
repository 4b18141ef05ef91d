/**
 * A company of Brazil's registry: the record the API returns (the contract's Company, whichever
 * source gave it) and the document the store keeps for it, with the keys the search filters on.
 */
import type { Company } from '../../shared/types.ts';
import { foldText } from '../../shared/fold-text.ts';
import { words } from '../lib/text.ts';

export const REGISTRY_SOURCE = 'receita_federal';

export type { CodeAndDescription, Partner } from '../../shared/types.ts';

/** A company establishment as the API returns it, whichever source it came from (the contract's Company). */
export type CompanyView = Company;

/** A company's registry data: what a source gives, before it is named as the source. */
export type CompanyRecord = Omit<CompanyView, 'source'>;

export type RegistrationStatus = NonNullable<CompanyRecord['registrationStatus']>;

/**
 * Derived fields the search filters on, kept beside the record so that both stores can index
 * them: folded words for name and partner search, every activity code, presence flags.
 */
export interface SearchKeys {
  name: string[];
  partners: string[];
  partnerDocuments: string[];
  activities: string[];
  city: string | null;
  hasPhone: boolean;
  hasEmail: boolean;
  /** Issue 22: the partners' age-band codes, the folded federative entity, and the tax regimes (`lucro_real`, `lucro_real:2023`). */
  partnerAgeBands?: string[];
  federativeEntity?: string | null;
  taxRegimes?: string[];
}

/** What the store keeps of an establishment: its tax regimes live in `tax_regimes` and are joined when read. */
export interface CompanyDoc extends Omit<CompanyRecord, 'taxRegimes'> {
  /** The CNPJ. */
  _id: string;
  release: string;
  /** The import that wrote it: a complete import removes what it did not write. */
  importRun: string;
  search: SearchKeys;
}

export type StoredRecord = Omit<CompanyRecord, 'release' | 'taxRegimes'>;

export function searchKeys(record: StoredRecord, taxRegimes: string[] = []): SearchKeys {
  // Written as loops rather than spreads of Sets: it runs for every establishment of an import.
  const name = words(record.name);
  for (const word of words(record.tradeName)) if (!name.includes(word)) name.push(word);
  const partners = new Set<string>();
  const partnerDocuments = new Set<string>();
  const partnerAgeBands = new Set<string>();
  for (const partner of record.partners) {
    for (const word of words(partner.name)) partners.add(word);
    if (partner.document) partnerDocuments.add(partner.document);
    if (partner.ageBand) partnerAgeBands.add(partner.ageBand.code);
  }
  const activities: string[] = record.mainActivity ? [record.mainActivity.code] : [];
  for (const activity of record.secondaryActivities) if (activity && !activities.includes(activity.code)) activities.push(activity.code);
  return {
    name,
    partners: [...partners],
    partnerDocuments: [...partnerDocuments],
    activities,
    city: record.address.city ? foldedOnce(record.address.city) : null,
    hasPhone: record.phones.length > 0,
    hasEmail: record.email !== null,
    partnerAgeBands: [...partnerAgeBands],
    federativeEntity: record.federativeEntity ? foldedOnce(record.federativeEntity) : null,
    taxRegimes,
  };
}

/** Cities and federative entities come from a few thousand names, folded once each. */
const FOLDED = new Map<string, string>();
const MOST_FOLDED = 50_000;

function foldedOnce(text: string): string {
  let folded = FOLDED.get(text);
  if (folded === undefined) {
    folded = foldText(text);
    if (FOLDED.size < MOST_FOLDED) FOLDED.set(text, folded);
  }
  return folded;
}

export function companyDocument(
  record: StoredRecord,
  stamp: { release: string; importRun: string },
  taxRegimes?: string[],
): CompanyDoc {
  return { _id: record.cnpj, ...record, ...stamp, search: searchKeys(record, taxRegimes) };
}

export function companyView(record: CompanyRecord, source = REGISTRY_SOURCE): CompanyView {
  return { ...record, source };
}
