/**
 * Apollo: person match (`POST /api/v1/people/bulk_match`, up to 10 details; we send one) for
 * enrichment, and people search (`POST /api/v1/mixed_people/api_search`), which is free at Apollo
 * and returns no emails. Authenticated with the master key in `x-api-key`.
 */
import { textOf, type ProviderFields } from './fields.ts';
import type { HttpAnswer, ProviderHttp } from './http.ts';
import { ProviderFailure } from './provider-failure.ts';
import type { Maybe } from '../lib/maybe.ts';
import type { Provider } from './data-provider.ts';
import type { TraceContext } from '../lib/trace-context.ts';

export const APOLLO_URL = 'https://api.apollo.io';

export interface ApolloOrganization {
  name?: Maybe<string>;
  primary_domain?: Maybe<string>;
  website_url?: Maybe<string>;
  linkedin_url?: Maybe<string>;
  industry?: Maybe<string>;
  estimated_num_employees?: Maybe<number>;
}

export interface ApolloPerson {
  id?: Maybe<string>;
  first_name?: Maybe<string>;
  last_name?: Maybe<string>;
  name?: Maybe<string>;
  title?: Maybe<string>;
  seniority?: Maybe<string>;
  departments?: Maybe<string[]>;
  linkedin_url?: Maybe<string>;
  email?: Maybe<string>;
  /** Apollo's own verification: `verified`, `unverified`, `likely to engage`, `unavailable`. */
  email_status?: Maybe<string>;
  personal_emails?: Maybe<string[]>;
  phone_numbers?: Maybe<Array<{ sanitized_number?: Maybe<string>; raw_number?: Maybe<string> }>>;
  city?: Maybe<string>;
  state?: Maybe<string>;
  country?: Maybe<string>;
  organization?: Maybe<ApolloOrganization>;
}

/** The fields an Apollo person record gives. Its email counts as verified only when Apollo verified it. */
export function apolloFields(person: ApolloPerson): ProviderFields {
  const org = person.organization ?? {};
  const email = textOf(person.email);
  const status = textOf(person.email_status);
  const phone = person.phone_numbers?.map((p) => textOf(p.sanitized_number) ?? textOf(p.raw_number)).find(Boolean);
  return {
    fullName: textOf(person.name) ?? ([textOf(person.first_name), textOf(person.last_name)].filter(Boolean).join(' ') || null),
    firstName: textOf(person.first_name),
    lastName: textOf(person.last_name),
    title: textOf(person.title),
    seniority: textOf(person.seniority),
    department: textOf(person.departments?.[0]),
    linkedinUrl: textOf(person.linkedin_url),
    email,
    emailStatus: email && status === 'verified' ? 'verified' : null,
    personalEmail: textOf(person.personal_emails?.[0]),
    phone: phone ?? null,
    location: [textOf(person.city), textOf(person.state)].filter(Boolean).join(', ') || null,
    country: textOf(person.country),
    companyName: textOf(org.name),
    companyDomain: textOf(org.primary_domain),
    companyLinkedinUrl: textOf(org.linkedin_url),
    industry: textOf(org.industry),
    companySize: typeof org.estimated_num_employees === 'number' ? org.estimated_num_employees : null,
  };
}

function apolloError(answer: HttpAnswer): ProviderFailure {
  const body = answer.body as { error?: unknown; message?: unknown } | null;
  const why = textOf(body?.error) ?? textOf(body?.message) ?? `HTTP ${answer.status}`;
  return new ProviderFailure(`Apollo: ${why}`);
}

export const apollo: Provider = {
  id: 'apollo',
  name: 'Apollo',
  kind: 'person',
  inputs: [['email'], ['linkedinUrl'], ['fullName', 'companyDomain'], ['fullName', 'companyName']],
  outputs: [
    'fullName',
    'firstName',
    'lastName',
    'title',
    'seniority',
    'department',
    'linkedinUrl',
    'email',
    'emailStatus',
    'personalEmail',
    'phone',
    'location',
    'country',
    'companyName',
    'companyDomain',
    'companyLinkedinUrl',
    'industry',
    'companySize',
  ],
  cost: 2,
  quality: 8,
  // Enrichment on free plans: 50 a minute; paid plans raise it (APOLLO_RATE_PER_MINUTE).
  limits: { perSecond: 5, perMinute: 50, maxConcurrent: 5 },
  keyVariable: 'APOLLO_API_KEY',
  keyLooksLike: 'an Apollo master API key: about 22 letters, digits, - and _ (Apollo → Settings → Integrations → API)',
  baseUrl: APOLLO_URL,
  async enrich(known, { http, signal, trace }) {
    const detail = {
      email: known.email,
      linkedin_url: known.linkedinUrl,
      name: known.fullName,
      first_name: known.firstName,
      last_name: known.lastName,
      domain: known.companyDomain,
      organization_name: known.companyName,
    };
    const answer = await http.send(
      {
        method: 'POST',
        path: '/api/v1/people/bulk_match',
        headers: { 'x-api-key': http.key ?? '' },
        body: { details: [detail], reveal_personal_emails: false, reveal_phone_number: false },
      },
      signal,
      trace,
    );
    if (answer.status === 404) return null;
    if (answer.status !== 200) throw apolloError(answer);
    const matches = (answer.body as { matches?: unknown } | null)?.matches;
    if (!Array.isArray(matches)) throw new ProviderFailure('Apollo: unreadable answer');
    const person = matches[0];
    return person && typeof person === 'object' ? apolloFields(person as ApolloPerson) : null;
  },
};

export interface ApolloSearch {
  person_titles?: string[];
  person_seniorities?: string[];
  person_locations?: string[];
  organization_locations?: string[];
  q_organization_domains_list?: string[];
  organization_num_employees_ranges?: string[];
  contact_email_status?: string[];
  q_keywords?: string;
  per_page: number;
  page?: number;
}

/** One page of Apollo's people search, with how many pages its `pagination` says there are. */
export async function searchApolloPage(
  http: ProviderHttp,
  query: ApolloSearch,
  signal: AbortSignal,
  trace?: TraceContext,
): Promise<{ people: ApolloPerson[]; totalPages: number }> {
  const answer = await http.send(
    { method: 'POST', path: '/api/v1/mixed_people/api_search', headers: { 'x-api-key': http.key ?? '' }, body: query },
    signal,
    trace,
  );
  if (answer.status !== 200) throw apolloError(answer);
  const people = (answer.body as { people?: unknown } | null)?.people;
  if (!Array.isArray(people)) throw new ProviderFailure('Apollo: unreadable answer');
  const pagination = (answer.body as { pagination?: { total_pages?: unknown } }).pagination;
  const totalPages = typeof pagination?.total_pages === 'number' ? pagination.total_pages : 1;
  return { people: people.filter((p): p is ApolloPerson => typeof p === 'object' && p !== null), totalPages };
}
