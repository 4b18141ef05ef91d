/**
 * People Data Labs person enrichment: `GET /v5/person/enrich` with a LinkedIn profile, an email,
 * or a name and company; 200 with `likelihood` and `data` on a match, 404 (free) when none.
 */
import { textOf, type ProviderFields } from './fields.ts';
import { ProviderFailure } from './provider-failure.ts';
import { confidenceOf, scored, type Provider } from './data-provider.ts';

export const PDL_URL = 'https://api.peopledatalabs.com';
/** PDL's own scale is 1–10; below 6 matches are too often someone else. */
const MIN_LIKELIHOOD = '6';

const first = (value: unknown) => (Array.isArray(value) ? textOf(value[0]) : null);
/** PDL gives profile URLs without a scheme (`linkedin.com/in/…`). */
const url = (value: unknown) => {
  const link = textOf(value);
  return link && !/^https?:\/\//.test(link) ? `https://${link}` : link;
};
const titleCase = (value: string | null) => value?.replace(/\b\p{L}/gu, (c) => c.toUpperCase()) ?? null;

export function pdlFields(data: Record<string, unknown>): ProviderFields {
  return {
    fullName: titleCase(textOf(data.full_name)),
    firstName: titleCase(textOf(data.first_name)),
    lastName: titleCase(textOf(data.last_name)),
    title: titleCase(textOf(data.job_title)),
    seniority: first(data.job_title_levels),
    department: textOf(data.job_title_role),
    linkedinUrl: url(data.linkedin_url),
    email: textOf(data.work_email),
    personalEmail: first(data.personal_emails),
    phone: textOf(data.mobile_phone) ?? first(data.phone_numbers),
    location: titleCase(textOf(data.location_name)),
    country: titleCase(textOf(data.location_country)),
    companyName: titleCase(textOf(data.job_company_name)),
    companyDomain: textOf(data.job_company_website),
    companyLinkedinUrl: url(data.job_company_linkedin_url),
    industry: textOf(data.job_company_industry),
    companySize: textOf(data.job_company_size),
  };
}

export const peopleDataLabs: Provider = {
  id: 'pdl',
  name: 'People Data Labs',
  kind: 'person',
  inputs: [['linkedinUrl'], ['email'], ['personalEmail'], ['fullName', 'companyName'], ['fullName', 'companyDomain']],
  outputs: [
    'fullName',
    'firstName',
    'lastName',
    'title',
    'seniority',
    'department',
    'linkedinUrl',
    'email',
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
  cost: 3,
  quality: 9,
  // Free plans: 100 a minute; paid: 1,000 (PDL_RATE_PER_MINUTE).
  limits: { perSecond: 10, perMinute: 100, maxConcurrent: 5 },
  keyVariable: 'PDL_API_KEY',
  keyLooksLike: 'a People Data Labs API key: 64 letters and digits (dashboard.peopledatalabs.com → API keys)',
  baseUrl: PDL_URL,
  async enrich(known, { http, signal, trace }) {
    const query: Record<string, string | undefined> = { min_likelihood: MIN_LIKELIHOOD };
    if (known.linkedinUrl) query.profile = String(known.linkedinUrl);
    else if (known.email || known.personalEmail) query.email = String(known.email ?? known.personalEmail);
    else {
      query.name = String(known.fullName);
      query.company = String(known.companyDomain ?? known.companyName);
    }
    const answer = await http.send({ path: '/v5/person/enrich', query, headers: { 'X-Api-Key': http.key ?? '' } }, signal, trace);
    if (answer.status === 404) return null;
    const body = answer.body as { data?: unknown; error?: { message?: unknown } } | null;
    if (answer.status !== 200) throw new ProviderFailure(`People Data Labs: ${textOf(body?.error?.message) ?? `HTTP ${answer.status}`}`);
    if (typeof body?.data !== 'object' || body.data === null) throw new ProviderFailure('People Data Labs: unreadable answer');
    // `likelihood` (1-10) is PDL's confidence that the profile is the person asked about.
    return scored(pdlFields(body.data as Record<string, unknown>), confidenceOf((body as { likelihood?: unknown }).likelihood, 10));
  },
};
