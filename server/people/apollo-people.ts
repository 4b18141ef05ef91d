/**
 * People from Apollo's people search. Each filter maps onto one documented search parameter
 * (the seniority and email-status vocabularies are Apollo's own); a filter with no parameter is
 * refused by name rather than ignored. The search returns no emails, only whether Apollo has one.
 */
import { searchApollo, type ApolloPerson, type ApolloSearch } from '../providers/apollo.ts';
import { ProviderFailure } from '../providers/provider.ts';
import { normalizeDomain } from '../enrich/enrich-record.ts';
import { apolloSizeRange, unsupported, type FilterName } from './filters.ts';
import type { PersonView } from './person-view.ts';
import { SourceUnable, type PeopleSource } from './source.ts';

export const APOLLO_PEOPLE_SOURCE = 'apollo';

const SUPPORTED: FilterName[] = ['jobTitle', 'seniorities', 'location', 'companyLocation', 'domain', 'companySizes', 'emailStatuses'];

const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);

export function apolloPersonView(person: ApolloPerson): PersonView {
  const org = person.organization ?? {};
  const name = text(person.name) ?? [text(person.first_name), text(person.last_name)].filter(Boolean).join(' ');
  return {
    name,
    firstName: text(person.first_name),
    lastName: text(person.last_name),
    title: text(person.title),
    seniority: text(person.seniority),
    department: text(person.departments?.[0]),
    linkedinUrl: text(person.linkedin_url),
    emailStatus: text(person.email_status) ?? 'unavailable',
    company: text(org.name),
    domain: text(org.primary_domain),
    industry: text(org.industry),
    companySize: typeof org.estimated_num_employees === 'number' ? org.estimated_num_employees : null,
    location: [text(person.city), text(person.state)].filter(Boolean).join(', ') || null,
    country: text(person.country),
    apolloId: text(person.id),
    source: APOLLO_PEOPLE_SOURCE,
  };
}

export const searchApolloPeople: PeopleSource = async ({ filters: f, limit, signal, slots }) => {
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
    const people = await searchApollo(slot.http, query, signal);
    return people.map(apolloPersonView).filter((p) => p.name !== '').slice(0, limit);
  } catch (err) {
    if (err instanceof ProviderFailure) throw new SourceUnable(err.message);
    throw err;
  }
};
