/**
 * People from Apollo's people search. Each filter maps onto one documented search parameter
 * (the seniority and email-status vocabularies are Apollo's own); a filter with no parameter is
 * refused by name rather than ignored. The search returns no emails, only whether Apollo has one.
 */
import { cleanFound } from '../providers/clean-found.ts';
import { textOf } from '../providers/fields.ts';
import { apolloFields, searchApolloPage, type ApolloPerson, type ApolloSearch } from '../providers/apollo.ts';
import { ProviderFailure } from '../providers/provider-failure.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import { apolloSizeRange, unsupported, type FilterName } from './filters.ts';
import type { PersonView } from './person-view.ts';
import { SourceUnable, type PeopleSource } from './people-source.ts';

export const APOLLO_PEOPLE_SOURCE = 'apollo';

const SUPPORTED: FilterName[] = ['jobTitle', 'seniorities', 'location', 'companyLocation', 'domain', 'companySizes', 'emailStatuses'];

/**
 * A search row: the fields bulk match would give (`apolloFields`) under the people-search names,
 * and Apollo's own email status, since the search returns no email to verify.
 */
export function apolloPersonView(person: ApolloPerson): PersonView {
  // Held to the enrichment fields' schemas, as a bulk match's answer is (issue 39): no NUL, no
  // 900,000-character title, no 1e309 headcount in a row charged a credit.
  const f = cleanFound(apolloFields(person));
  const str = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    name: str(f.fullName) ?? '',
    firstName: str(f.firstName),
    lastName: str(f.lastName),
    title: str(f.title),
    seniority: str(f.seniority),
    department: str(f.department),
    linkedinUrl: str(f.linkedinUrl),
    emailStatus: textOf(person.email_status) ?? 'unavailable',
    company: str(f.companyName),
    domain: str(f.companyDomain),
    industry: str(f.industry),
    companySize: typeof f.companySize === 'number' ? f.companySize : null,
    location: str(f.location),
    country: str(f.country),
    apolloId: textOf(person.id),
    source: APOLLO_PEOPLE_SOURCE,
  };
}

/** Where Apollo's search stands: its page size (fixed by the first page), the page and the row in it. */
interface ApolloPosition {
  perPage: number;
  page: number;
  index: number;
}

const isPosition = (value: unknown): value is ApolloPosition =>
  typeof (value as ApolloPosition | null)?.perPage === 'number' && typeof (value as ApolloPosition).page === 'number';

/** Apollo's search pages at most 100 rows; a request never reads more than this many of its pages. */
const MAX_APOLLO_PAGES = 3;

export const searchApolloPeople: PeopleSource = async ({ filters: f, limit, signal, trace, slots, position }) => {
  const slot = slots.get('apollo');
  if (!slot) throw new SourceUnable('Apollo is not configured (set APOLLO_API_KEY, or store a workspace key)');
  const refused = unsupported(f, SUPPORTED);
  if (refused) throw new SourceUnable(`Apollo's people search cannot filter by ${refused}`);
  const start: ApolloPosition = isPosition(position) ? position : { perPage: Math.min(limit, 100), page: 1, index: 0 };
  const query: ApolloSearch = {
    per_page: start.perPage,
    page: start.page,
    ...(f.jobTitle?.trim() ? { person_titles: [f.jobTitle.trim()] } : {}),
    ...(f.seniorities?.length ? { person_seniorities: f.seniorities } : {}),
    ...(f.location?.trim() ? { person_locations: [f.location.trim()] } : {}),
    ...(f.companyLocation?.trim() ? { organization_locations: [f.companyLocation.trim()] } : {}),
    ...(f.domain?.trim() ? { q_organization_domains_list: [normalizeDomain(f.domain)] } : {}),
    ...(f.companySizes?.length ? { organization_num_employees_ranges: f.companySizes.map(apolloSizeRange) } : {}),
    ...(f.emailStatuses?.length ? { contact_email_status: f.emailStatuses } : {}),
  };
  // Apollo's own pagination: pages of `perPage` rows, read from the row where the last page stopped.
  const rows: PersonView[] = [];
  const after: ApolloPosition[] = [];
  let page = start.page;
  let index = start.index;
  try {
    for (let read = 0; read < MAX_APOLLO_PAGES && rows.length < limit; read++) {
      const answer = await searchApolloPage(slot.http, { ...query, page }, signal, trace);
      for (; index < answer.people.length && rows.length < limit; index++) {
        const view = apolloPersonView(answer.people[index]!);
        if (view.name === '') continue;
        rows.push(view);
        after.push({ perPage: start.perPage, page, index: index + 1 });
      }
      const pageDone = index >= answer.people.length;
      if (!pageDone) return { rows, after, end: { perPage: start.perPage, page, index } };
      if (page >= answer.totalPages || answer.people.length < start.perPage) return { rows, after, end: null };
      page++;
      index = 0;
    }
    return { rows, after, end: { perPage: start.perPage, page, index } };
  } catch (err) {
    if (err instanceof ProviderFailure) throw new SourceUnable(err.message);
    throw err;
  }
};
