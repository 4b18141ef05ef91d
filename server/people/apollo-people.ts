/**
 * People from Apollo's people search. Each filter maps onto one documented search parameter
 * (the seniority and email-status vocabularies are Apollo's own); a filter with no parameter is
 * refused by name rather than ignored. The search returns no emails, only whether Apollo has one.
 */
import { textOf } from '../providers/fields.ts';
import { apolloFields, searchApollo, type ApolloPerson, type ApolloSearch } from '../providers/apollo.ts';
import { ProviderFailure } from '../providers/provider-failure.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import { apolloSizeRange, unsupported, type FilterName } from './filters.ts';
import type { PersonView } from './person-view.ts';
import { SourceUnable, type PeopleSource } from './source.ts';

export const APOLLO_PEOPLE_SOURCE = 'apollo';

const SUPPORTED: FilterName[] = ['jobTitle', 'seniorities', 'location', 'companyLocation', 'domain', 'companySizes', 'emailStatuses'];

/**
 * A search row: the fields bulk match would give (`apolloFields`) under the people-search names,
 * and Apollo's own email status, since the search returns no email to verify.
 */
export function apolloPersonView(person: ApolloPerson): PersonView {
  const f = apolloFields(person);
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

export const searchApolloPeople: PeopleSource = async ({ filters: f, limit, signal, trace, slots }) => {
  const slot = slots.get('apollo');
  if (!slot) throw new SourceUnable('Apollo is not configured (set APOLLO_API_KEY, or store a workspace key)');
  const refused = unsupported(f, SUPPORTED);
  if (refused) throw new SourceUnable(`Apollo's people search cannot filter by ${refused}`);
  const query: ApolloSearch = {
    per_page: limit,
    page: 1,
    ...(f.jobTitle?.trim() ? { person_titles: [f.jobTitle.trim()] } : {}),
    ...(f.seniorities?.length ? { person_seniorities: f.seniorities } : {}),
    ...(f.location?.trim() ? { person_locations: [f.location.trim()] } : {}),
    ...(f.companyLocation?.trim() ? { organization_locations: [f.companyLocation.trim()] } : {}),
    ...(f.domain?.trim() ? { q_organization_domains_list: [normalizeDomain(f.domain)] } : {}),
    ...(f.companySizes?.length ? { organization_num_employees_ranges: f.companySizes.map(apolloSizeRange) } : {}),
    ...(f.emailStatuses?.length ? { contact_email_status: f.emailStatuses } : {}),
  };
  try {
    const people = await searchApollo(slot.http, query, signal, trace);
    return people.map(apolloPersonView).filter((p) => p.name !== '').slice(0, limit);
  } catch (err) {
    if (err instanceof ProviderFailure) throw new SourceUnable(err.message);
    throw err;
  }
};
