/** People search, its stream and hydrate, plus the stream event payloads shared with company search. */
import { Type, type TSchema } from '@sinclair/typebox';
import { OpenObject, OptionalText as text, OptionalTexts as texts, StringEnum } from './common.ts';
import { MaxCredits } from './enrichment.ts';

export const EMAIL_STATUSES = ['verified', 'likely to engage', 'unverified', 'unavailable'] as const;

/** Seniority levels, as the large people databases name them. */
export const SENIORITIES = ['owner', 'founder', 'c_suite', 'partner', 'vp', 'head', 'director', 'manager', 'senior', 'entry', 'intern'] as const;

/** Job functions (departments). */
export const ROLES = [
  'executive',
  'engineering',
  'information_technology',
  'product',
  'design',
  'sales',
  'marketing',
  'customer_success',
  'operations',
  'finance',
  'human_resources',
  'legal',
  'education',
  'medical',
  'consulting',
] as const;

/** Company sizes by headcount. */
export const COMPANY_SIZES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001+'] as const;

/**
 * Where people come from: the workspace's imported lists, the partners (sócios) of registry
 * companies, the demo set, and Apollo's people search.
 */
export const PEOPLE_SOURCES = ['lists', 'receita_federal', 'demo', 'apollo'] as const;

/** How many results a search may return: 1 to `max`. */
export const SearchLimit = (max: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: max, description: `Maximum number of results, 1 to ${max}.` }));


const peopleFilters = {
  jobTitle: text('Job title to look for.'),
  company: text('Company name.'),
  domain: text('Company web domain, e.g. `acme.com`.'),
  industry: text("The company's industry."),
  personIndustry: text("The person's own industry."),
  skills: text('Skills, free text.'),
  location: text("The person's location."),
  companyLocation: text("The company's location."),
  revenueRange: text("The company's revenue range."),
  language: text('Language spoken by the person.'),
  seniorities: Type.Optional(Type.Array(StringEnum(SENIORITIES), { description: 'Seniority levels.' })),
  roles: Type.Optional(Type.Array(StringEnum(ROLES), { description: 'Job functions (departments).' })),
  companySizes: Type.Optional(Type.Array(StringEnum(COMPANY_SIZES), { description: 'Company sizes by headcount.' })),
  technologies: texts('Technologies the company uses (any of them).'),
  sourceOrder: Type.Optional(
    Type.Array(StringEnum(PEOPLE_SOURCES), {
      description: 'Sources to query, in order of preference (default: lists, receita_federal, demo, then apollo when configured).',
    }),
  ),
  emailStatuses: Type.Optional(
    Type.Array(StringEnum(EMAIL_STATUSES), { description: 'Keep people whose email has one of these statuses.' }),
  ),
};

/** Body of the people search and of its stream: every filter is optional. */
export const PeopleSearchBody = Type.Object(
  { ...peopleFilters, limit: SearchLimit(25) },
  { additionalProperties: false, description: 'People search filters, all optional.' },
);

export const Person = OpenObject('A person found by a search.', {
  name: Type.String({ description: 'Full name.' }),
  source: Type.String({ description: 'The data source that returned the person.' }),
});

export const PeopleResults = OpenObject('People found.', { results: Type.Array(Person) });

export const HydrateBody = Type.Object(
  {
    leads: Type.Array(OpenObject('A lead as returned by a search; any fields.'), {
      maxItems: 25,
      description: 'People already found, at most 25.',
    }),
    maxCredits: MaxCredits,
  },
  { additionalProperties: false },
);

export const HydrateResults = OpenObject('The leads, enriched.', {
  results: Type.Array(OpenObject('An enriched lead.')),
});

/** The payload of one `page` event of a stream: the rows one source added. */
export const StreamPage = <T extends TSchema>(item: T) =>
  OpenObject('Payload of a `page` event: the rows one source added.', {
    source: Type.String({ description: 'The data source of these rows.' }),
    results: Type.Array(item),
  });

export const PeoplePage = StreamPage(Person);

/** The payload of the single `done` event that ends a stream. */
export const StreamDone = OpenObject('Payload of the `done` event that ends a stream.', {
  total: Type.Integer({ minimum: 0, description: 'Rows sent in all pages.' }),
  sources: Type.Array(
    Type.Object(
      {
        source: Type.String(),
        count: Type.Integer({ minimum: 0, description: 'Rows this source added.' }),
        error: Type.Optional(Type.String({ description: 'Why this source failed, when it did.' })),
      },
      { additionalProperties: true },
    ),
  ),
});
