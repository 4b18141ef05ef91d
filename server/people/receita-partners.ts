/**
 * People from the imported registry: the partners (sócios) of companies. The open data publishes
 * a partner's name, masked CPF, qualification and entry date, and nothing else about the
 * person, so a partner's job title is their qualification, their place is their company's, and
 * they have no email. Filters about things the registry does not hold are refused by name.
 */
import { ServiceError } from '../lib/errors.ts';
import type { Companies } from '../companies/companies.ts';
import type { CompanyRecord, Partner } from '../companies/company-record.ts';
import type { CompanyFilters } from '../companies/search-plan.ts';
import { foldText } from '../../shared/fold-text.ts';
import { words } from '../lib/text.ts';
import { unsupported, type FilterName, type PeopleFilters } from './filters.ts';
import type { PersonView } from './person-view.ts';
import { SourceUnable, type SourceRows } from './people-source.ts';

export const REGISTRY_PEOPLE_SOURCE = 'receita_federal';

const SUPPORTED: FilterName[] = ['jobTitle', 'company', 'industry', 'location', 'companyLocation', 'seniorities', 'roles', 'emailStatuses'];

/** Companies read per page, and at most how many pages, while looking for matching partners. */
const PAGE = 200;
const MAX_PAGES = 10;

/** Seniority of a qualification; the first pattern that matches the folded text wins. */
const SENIORITY: Array<[RegExp, string]> = [
  [/\bfundador\b/, 'founder'],
  [/\b(titular|empresario|socio administrador|socio gerente|produtor rural)\b/, 'owner'],
  [/\bpresidente\b/, 'c_suite'],
  [/\b(diretor|conselheiro)\b/, 'director'],
  [/\badministrador\b/, 'manager'],
  [/\bsocio\b/, 'partner'],
];

/** English (and plain Portuguese) titles → the qualification words they stand for. */
const TITLE_SYNONYMS: Record<string, string[]> = {
  owner: ['titular', 'socio', 'empresario'],
  dono: ['titular', 'socio', 'empresario'],
  founder: ['fundador'],
  partner: ['socio'],
  ceo: ['presidente', 'administrador'],
  president: ['presidente'],
  director: ['diretor'],
  manager: ['administrador', 'gerente'],
  administrator: ['administrador'],
  treasurer: ['tesoureiro'],
  secretary: ['secretario'],
};

export function seniorityOf(qualification: string | null): string | null {
  const folded = foldText(qualification ?? '');
  return SENIORITY.find(([pattern]) => pattern.test(folded))?.[1] ?? null;
}

/** Every word of the job title must match the qualification, directly or through a synonym. */
function titleMatcher(jobTitle: string | undefined): (qualification: string | null) => boolean {
  const terms = words(jobTitle);
  if (terms.length === 0) return () => true;
  return (qualification) => {
    const have = new Set(words(qualification));
    return terms.every((t) => have.has(t) || (TITLE_SYNONYMS[t] ?? []).some((s) => have.has(s)));
  };
}

/** A partner that is a company (its document is a CNPJ) is not a person. */
const isPerson = (partner: Partner) => !(partner.document && partner.document.length === 14);

function place(company: CompanyRecord): string | null {
  return [company.address.city, company.address.state].filter(Boolean).join(', ') || null;
}

export function partnerView(partner: Partner, company: CompanyRecord): PersonView {
  const where = place(company);
  return {
    name: partner.name,
    title: partner.qualification,
    seniority: seniorityOf(partner.qualification),
    department: 'executive',
    emailStatus: 'unavailable',
    company: company.tradeName ?? company.name,
    legalName: company.name,
    cnpj: company.cnpj,
    industry: company.mainActivity?.description ?? null,
    location: where,
    companyLocation: where,
    country: 'Brazil',
    partnerSince: partner.since,
    source: REGISTRY_PEOPLE_SOURCE,
  };
}

/**
 * Where the partner search stands: inside company `at` (CNPJ order), past its first `skip`
 * partners, with the partners already given for its root (a head office and its branches list
 * the same people, and the branches follow the head office in CNPJ order).
 */
export interface PartnerPosition {
  at: string;
  skip: number;
  root: string;
  rootKeys: string[];
}

function isPosition(value: unknown): value is PartnerPosition {
  const p = value as PartnerPosition | null;
  return typeof p?.at === 'string' && typeof p.skip === 'number' && typeof p.root === 'string' && Array.isArray(p.rootKeys);
}

/**
 * Up to `limit` partners matching the filters, in CNPJ order, one row per person and company
 * root, from `position` on (search pages).
 */
export async function searchPartners(
  companies: Pick<Companies, 'search'>,
  filters: PeopleFilters,
  limit: number,
  signal: AbortSignal,
  position?: unknown,
): Promise<SourceRows> {
  const refused = unsupported(filters, SUPPORTED);
  if (refused) throw new SourceUnable(`the registry cannot filter people by ${refused}`);
  const none = { rows: [], after: [], end: null };
  if (filters.emailStatuses?.length && !filters.emailStatuses.includes('unavailable')) return none;
  if (filters.roles?.length && !filters.roles.includes('executive')) return none;

  const where = filters.companyLocation ?? filters.location;
  const companyFilters: CompanyFilters = {
    ...(filters.company?.trim() ? { name: filters.company } : {}),
    ...(filters.industry?.trim() ? { industry: filters.industry } : {}),
    ...(where?.trim() ? { location: where } : {}),
  };
  const titleMatches = titleMatcher(filters.jobTitle);
  const seniorities = filters.seniorities?.length ? new Set<string>(filters.seniorities) : null;

  const start = isPosition(position) ? position : undefined;
  const found: PersonView[] = [];
  const after: PartnerPosition[] = [];
  let root = start?.root ?? '';
  let seen = new Set<string>(start?.rootKeys ?? []);
  let from = start ? { cnpj: start.at, inclusive: true } : undefined;
  let last: PartnerPosition | null = start ?? null;
  for (let page = 0; page < MAX_PAGES && !signal.aborted; page++) {
    let batch: CompanyRecord[];
    try {
      batch = (await companies.search(companyFilters, PAGE, from?.cnpj, from?.inclusive)).companies;
    } catch (err) {
      // A location or industry the registry cannot read is this source's problem, not the request's.
      if (err instanceof ServiceError && err.code === 'invalid_request') throw new SourceUnable(err.message.replace(/^location/, 'location (as a Brazilian city or state)'));
      throw err;
    }
    for (const company of batch) {
      if (company.root !== root) {
        root = company.root;
        seen = new Set();
      }
      const first = start && company.cnpj === start.at ? start.skip : 0;
      for (let i = first; i < company.partners.length; i++) {
        const partner = company.partners[i]!;
        if (!isPerson(partner) || !titleMatches(partner.qualification)) continue;
        if (seniorities && !seniorities.has(seniorityOf(partner.qualification) ?? '')) continue;
        const key = `${partner.document ?? ''}|${foldText(partner.name)}`;
        if (seen.has(key)) continue;
        if (found.length === limit) return { rows: found, after, end: { at: company.cnpj, skip: i, root, rootKeys: [...seen] } };
        seen.add(key);
        found.push(partnerView(partner, company));
        after.push({ at: company.cnpj, skip: i + 1, root, rootKeys: [...seen] });
      }
      last = { at: company.cnpj, skip: company.partners.length, root, rootKeys: [...seen] };
    }
    if (batch.length < PAGE) return { rows: found, after, end: null };
    from = { cnpj: batch[batch.length - 1]!.cnpj, inclusive: false };
  }
  // Scanned as far as one request may: the next page goes on from here.
  return { rows: found, after, end: signal.aborted ? null : last };
}
