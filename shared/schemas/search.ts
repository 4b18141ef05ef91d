/** People search, its stream and hydrate, plus the stream event payloads shared with company search. */
import { Type, type TSchema } from '@sinclair/typebox';
import {
  ClosedObject,
  CreditsCharged,
  DateOnly,
  Nullable,
  NullableText,
  OpenObject,
  SearchText as text,
  SearchTexts as texts,
  SourceCount,
  StringEnum,
} from './common.ts';
import { Cnpj, CnpjInput } from './registry.ts';
import { Attempt, ENRICH_IDENTIFIERS, FieldSources, ForceRefresh, MaxAge, MaxCredits } from './enrichment.ts';

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

/** At most this many rows per search, across its pages (decisions.md, "Search pages"). */
export const MAX_ROWS_PER_SEARCH = 1000;

/** The request half of search pages (decisions.md, "Search pages"); the streams do not page. */
export const SearchCursor = Type.Optional(
  Nullable(
    Type.String({ description: 'Opaque.' }),
    'The `nextCursor` of the previous page, to get the next one (absent or null: the first page). ' +
      'Only valid with the same filters, in the same workspace, for at least an hour; at most 1,000 rows per search.',
  ),
);

/** The answer half: where the next page starts. */
export const NextCursor = Nullable(
  Type.String({ description: 'Opaque.' }),
  'Send as `cursor`, with the same filters, for the next page; null on the last page.',
);

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

/** The plain people search also pages. */
export const PeoplePagedBody = Type.Object(
  { ...peopleFilters, limit: SearchLimit(25), cursor: SearchCursor },
  { additionalProperties: false, description: 'People search filters, all optional, and the page wanted.' },
);

/** A field a source may leave out, or send as null. */
const maybeText = (description: string) => Type.Optional(NullableText(description));

/**
 * A person as every people source returns it, under the same field names whatever the source, so
 * a row can be merged with its duplicates and handed to hydrate or enrich unchanged. A source
 * sends the fields it knows of; rows of one person merged from several sources carry the union.
 */
export const Person = ClosedObject(
  'A person found by a search.',
  {
    name: Type.String({ description: 'Full name.' }),
    firstName: maybeText('First name.'),
    lastName: maybeText('Last name.'),
    title: maybeText('Job title; for a registry partner, their qualification (e.g. Sócio-Administrador).'),
    seniority: maybeText('Seniority level (see `seniorities`).'),
    department: maybeText('Job function (see `roles`).'),
    email: maybeText('Work email. Apollo\'s search gives none, only whether it has one.'),
    emailStatus: Type.String({
      description: 'Usually `verified`, `likely to engage`, `unverified` or `unavailable` (no email); Apollo rows carry Apollo\'s own status.',
    }),
    phone: maybeText('Phone number.'),
    linkedinUrl: maybeText('Professional-network profile URL.'),
    company: maybeText('Company name (trade name when there is one).'),
    legalName: Type.Optional(Type.String({ description: "The company's legal name (registry partners)." })),
    domain: maybeText('Company web domain.'),
    cnpj: Type.Optional(Cnpj),
    industry: maybeText("The company's industry; for a registry partner, its main activity."),
    companySize: Type.Optional(Nullable(Type.Integer({ minimum: 0 }), 'Headcount of the company.')),
    location: maybeText("The person's location."),
    companyLocation: maybeText("The company's location."),
    country: maybeText('Country.'),
    revenueRange: maybeText("The company's revenue range (imported lists)."),
    skills: Type.Optional(Type.Array(Type.String(), { description: 'Skills (imported lists).' })),
    technologies: Type.Optional(Type.Array(Type.String(), { description: 'Technologies the company uses (imported lists).' })),
    languages: Type.Optional(Type.Array(Type.String(), { description: 'Languages spoken (imported lists).' })),
    list: Type.Optional(Type.String({ description: 'The imported list (or the demo set) the row comes from.' })),
    partnerSince: Type.Optional(Nullable(DateOnly('When the partner entered the company (registry partners).'))),
    apolloId: maybeText("Apollo's id of the person."),
    source: Type.String({ description: 'The source that gave the row first: `lists`, `receita_federal`, `demo` or `apollo`.' }),
    sources: Type.Optional(
      Type.Array(Type.String(), { description: 'Every source that gave this person, when more than one did.' }),
    ),
  },
  { title: 'Person' },
);

export const PeopleResults = ClosedObject(
  'People found.',
  {
    results: Type.Array(Person, { description: 'The people, by source in `sourceOrder`, duplicates merged.' }),
    sources: Type.Array(SourceCount, { description: 'What each source added, in `sourceOrder`.' }),
    nextCursor: NextCursor,
    creditsCharged: CreditsCharged,
  },
  { title: 'PeopleResults' },
);

/**
 * The names a lead's text may come under, as search rows send them (null when unknown): a
 * number there is refused rather than read (a numeric CNPJ would have lost its leading zeros).
 * Other fields are the client's own and pass through as sent.
 */
const LEAD_TEXT_FIELDS = [
  ...ENRICH_IDENTIFIERS,
  'name', 'firstName', 'lastName', 'title', 'jobTitle', 'company', 'domain', 'website', 'linkedin',
] as const;

const leadText = () => Type.Optional(Nullable(Type.String({ maxLength: 5000 })));

const HydrateLead = OpenObject(
  'A lead as returned by a search; any fields, the ones the cascade reads as text (or null).',
  {
    ...(Object.fromEntries(LEAD_TEXT_FIELDS.map((field) => [field, leadText()])) as {
      [K in (typeof LEAD_TEXT_FIELDS)[number]]: ReturnType<typeof leadText>;
    }),
    // A CNPJ is read as one (its check digits matching), as enrich reads it.
    cnpj: Type.Optional(Nullable(CnpjInput('Company CNPJ, with or without punctuation.'))),
  },
);

export const HydrateBody = Type.Object(
  {
    leads: Type.Array(HydrateLead, {
      maxItems: 25,
      description: 'People already found, at most 25.',
    }),
    maxCredits: MaxCredits,
    maxAge: MaxAge,
    forceRefresh: ForceRefresh,
  },
  { additionalProperties: false },
);

/**
 * A lead as sent, with what the cascade found. It stays open: it echoes the client's own lead,
 * whose fields are the client's (their values come back as sent). A lead the credit budget left
 * unprocessed comes back as sent with `enriched: false`: whatever `sources` or `providers` it
 * carries are then the client's own.
 */
export const HydratedLead = Type.Union(
  [
    OpenObject('A lead that went through the cascade: its fields, with the fields found added.', {
      enriched: Type.Boolean({
        description: 'Whether at least one field was added: by the cascade (the lead is then charged), or from the workspace\'s stored answer (`cached`, free).',
      }),
      sources: FieldSources,
      providers: Type.Array(Attempt, { description: 'Every provider the cascade reached, in order (none when `cached`).' }),
      cached: Type.Boolean({ description: 'Answered from the workspace\'s stored answer for this person: charged 0, no provider called.' }),
      enrichedAt: Type.String({ format: 'date-time', description: 'When its data was paid for (now, unless `cached`).' }),
    }),
    OpenObject('A lead the credit budget left unprocessed, as sent.', {
      enriched: Type.Literal(false, { description: 'Not enriched: the budget ran out before this lead.' }),
    }),
  ],
  { title: 'HydratedLead', description: 'A lead as sent, with the fields the cascade found.' },
);

export const HydrateResults = ClosedObject(
  'The leads, enriched.',
  {
    results: Type.Array(HydratedLead, { description: 'The leads, in the order sent.' }),
    enriched: Type.Integer({ minimum: 0, description: 'Leads to which at least one field was added (charged unless `cached`).' }),
    creditsCharged: CreditsCharged,
    notProcessed: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Leads left unprocessed because the credit budget ran out.' }),
    ),
  },
  { title: 'HydrateResults' },
);

/** The payload of one `page` event of a stream: the rows one source added. */
export const StreamPage = <T extends TSchema>(item: T, title: string) =>
  ClosedObject(
    'Payload of a `page` event: the rows one source added.',
    {
      source: Type.String({ description: 'The data source of these rows.' }),
      results: Type.Array(item, { description: 'Rows not sent in an earlier page.' }),
    },
    { title },
  );

export const PeoplePage = StreamPage(Person, 'PeoplePage');

/** What every stream's `done` carries. */
export const streamDoneProperties = {
  total: Type.Integer({ minimum: 0, description: 'Rows sent in all pages.' }),
  sources: Type.Array(SourceCount, { description: 'What each source added, in the order the pages went out.' }),
  creditsCharged: CreditsCharged,
};

/** The payload of the single `done` event that ends the people stream. */
export const StreamDone = ClosedObject('Payload of the `done` event that ends a stream.', streamDoneProperties, {
  title: 'StreamDone',
});
