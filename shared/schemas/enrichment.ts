/** Cascade enrichment of one person or company record. */
import { Type, type TOptional, type TSchema, type TString } from '@sinclair/typebox';
import { AnyName, ClosedObject, CreditsCharged, DateOnly, OptionalText as text, StringEnum } from './common.ts';
import {
  Address,
  Cnpj,
  CnpjInput,
  CodeAndDescription,
  Partner,
  REGISTRATION_STATUSES,
  STORED_FISCAL_SIZES,
} from './registry.ts';

/** Fields a cascade can fill for a person… */
export const PERSON_FIELDS = [
  'fullName',
  'firstName',
  'lastName',
  'email',
  'emailStatus',
  'personalEmail',
  'phone',
  'linkedinUrl',
  'title',
  'seniority',
  'department',
  'location',
  'country',
] as const;

/** What Brazil's company registry publishes about a company, besides its name and CNPJ. */
export const REGISTRY_FIELDS = [
  'tradeName',
  'registrationStatus',
  'openingDate',
  'mainActivity',
  'secondaryActivities',
  'legalNature',
  'capital',
  'fiscalSize',
  'simplesOption',
  'companyAddress',
  'companyPhones',
  'companyEmail',
  'partners',
] as const;

/** …and for a company. */
export const COMPANY_FIELDS = [
  'companyName',
  'companyDomain',
  'companyLinkedinUrl',
  'industry',
  'companySize',
  'cnpj',
  ...REGISTRY_FIELDS,
] as const;

export const ENRICH_FIELDS = [...PERSON_FIELDS, ...COMPANY_FIELDS] as const;

/** The data providers' ids, the vocabulary of `providerOrder` (the catalog describes each). */
export const PROVIDER_IDS = ['receita_federal', 'brasilapi', 'apollo', 'hunter', 'hunter_verifier', 'pdl'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** A per-request cap on credits, a backwards-compatible addition to the interface. */
export const MaxCredits = Type.Optional(
  Type.Integer({
    minimum: 0,
    maximum: 1_000_000_000,
    description: 'Stop before spending more than this many credits on this request. A budget guard, at most 1,000,000,000.',
  }),
);

/**
 * `providerOrder`: one list for every field, or an object giving fields their own lists, of the
 * providers' ids (so that /openapi.json says which names are taken). Validation reports the error
 * of the branch whose type the value has (validate.ts), so a wrong provider is named in either
 * form. The fields are provider-order.ts's to check, naming them all: a property per field would
 * weigh on every tool list (tool-list.test.ts).
 */
const ProviderOrder = Type.Unsafe<ProviderId[] | Partial<Record<(typeof ENRICH_FIELDS)[number], ProviderId[]>>>(
  Type.Union(
    [
      Type.Array(StringEnum(PROVIDER_IDS), { description: 'Providers to try first for every field, in this order.' }),
      Type.Record(AnyName, Type.Array(StringEnum(PROVIDER_IDS)), {
        // The fields' names: a property per field would weigh on every tool list (the tools leave this out).
        propertyNames: { enum: [...ENRICH_FIELDS] },
        description: 'Field → the providers to try first for it, in this order (e.g. `{"email": ["hunter", "apollo"], "phone": ["apollo"]}`).',
      }),
    ],
    {
      description:
        `Providers to try first: a list for every field, or an object giving a field its own list. The others follow in the ` +
        `default order (by cost, then quality), as does a field not named. Providers: ${PROVIDER_IDS.join(', ')}.`,
    },
  ),
);

/** The fields that identify a record; at least one must be sent. */
export const ENRICH_IDENTIFIERS = [
  'email',
  'personalEmail',
  'linkedinUrl',
  'phone',
  'fullName',
  'companyName',
  'companyDomain',
  'cnpj',
] as const;

/** How old a stored answer may be to be given again (the enrichment memory); `enrich` and hydrate alike. */
export const MaxAge = Type.Optional(
  Type.Integer({
    minimum: 0,
    maximum: 31_536_000,
    description:
      'Seconds a stored answer for the same subject may be old to be given again, free and calling no provider ' +
      '(default 2,592,000: 30 days; at most 31,536,000). The subject is its identifiers, normalized; 0 runs the cascade.',
  }),
);

export const ForceRefresh = Type.Optional(
  Type.Boolean({ description: 'Run the cascade and charge as usual even when a stored answer is fresh enough.' }),
);

/**
 * The longest each text field is, sent or found (issue 39): a provider's longer value is garbage,
 * left out rather than stored, charged or answered, and an identifier sent longer is a 400.
 */
export const TEXT_MAX_LENGTH = {
  fullName: 200,
  firstName: 100,
  lastName: 100,
  email: 320,
  emailStatus: 20,
  personalEmail: 320,
  phone: 40,
  linkedinUrl: 500,
  title: 300,
  seniority: 50,
  department: 100,
  location: 300,
  country: 100,
  companyName: 300,
  companyDomain: 253,
  companyLinkedinUrl: 500,
  industry: 200,
  tradeName: 300,
  companyEmail: 320,
} as const;

export const EnrichBody = Type.Object(
  {
    email: Type.Optional(Type.String({ format: 'email', maxLength: TEXT_MAX_LENGTH.email, description: 'Work email.' })),
    personalEmail: Type.Optional(Type.String({ format: 'email', maxLength: TEXT_MAX_LENGTH.personalEmail, description: 'Personal email.' })),
    linkedinUrl: Type.Optional(Type.String({ format: 'uri', maxLength: TEXT_MAX_LENGTH.linkedinUrl, description: 'Professional-network profile URL.' })),
    phone: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH.phone, description: 'Phone number.' })),
    fullName: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH.fullName, description: "The person's full name." })),
    companyName: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH.companyName, description: 'Company name.' })),
    companyDomain: Type.Optional(Type.String({ maxLength: TEXT_MAX_LENGTH.companyDomain, description: 'Company web domain, e.g. `acme.com`.' })),
    cnpj: Type.Optional(CnpjInput('Company CNPJ, with or without punctuation.')),
    goalFields: Type.Optional(
      Type.Array(StringEnum(ENRICH_FIELDS), {
        description: 'The fields wanted (all when absent); providers that cannot add one of them are not called.',
      }),
    ),
    providerOrder: Type.Optional(ProviderOrder),
    onlyListed: Type.Optional(
      Type.Boolean({ description: 'Call only the providers named in `providerOrder`, none of the others.' }),
    ),
    maxCredits: MaxCredits,
    maxAge: MaxAge,
    forceRefresh: ForceRefresh,
  },
  {
    additionalProperties: false,
    // Each branch names one identifier, so a failure reads "at least one of … is required".
    anyOf: ENRICH_IDENTIFIERS.map((field) => ({ required: [field] })),
    description: `The record to enrich. At least one identifier is required: ${ENRICH_IDENTIFIERS.join(', ')}.`,
  },
);

type Field = (typeof ENRICH_FIELDS)[number];

const textField = (field: keyof typeof TEXT_MAX_LENGTH, description: string) =>
  Type.String({ maxLength: TEXT_MAX_LENGTH[field], description: `${description} At most ${TEXT_MAX_LENGTH[field]} characters.` });

/**
 * Every field a cascade can fill, with the type its value has once found. A field holds a value
 * or is absent: empty values are never kept.
 */
const fieldSchemas = {
  fullName: textField('fullName', "The person's full name."),
  firstName: textField('firstName', 'First name.'),
  lastName: textField('lastName', 'Last name.'),
  email: textField('email', 'Work email.'),
  emailStatus: textField('emailStatus', '`verified` (a verifier said valid), `accept_all`, `invalid` or `unverified`.'),
  personalEmail: textField('personalEmail', 'Personal email.'),
  phone: textField('phone', 'Phone number.'),
  linkedinUrl: textField('linkedinUrl', 'Professional-network profile URL.'),
  title: textField('title', 'Job title.'),
  seniority: textField('seniority', 'Seniority level.'),
  department: textField('department', 'Job function.'),
  location: textField('location', "The person's location."),
  country: textField('country', 'Country.'),
  companyName: textField('companyName', 'Company (legal) name.'),
  companyDomain: textField('companyDomain', 'Company web domain.'),
  companyLinkedinUrl: textField('companyLinkedinUrl', "The company's professional-network page."),
  industry: textField('industry', 'Industry.'),
  companySize: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ maxLength: 40 })], {
    description: 'Headcount (Apollo), or a headcount range such as `51-200` (People Data Labs).',
  }),
  cnpj: Cnpj,
  tradeName: textField('tradeName', 'Trade name (nome fantasia).'),
  registrationStatus: StringEnum(REGISTRATION_STATUSES, { description: 'Registration status (situação cadastral).' }),
  openingDate: DateOnly('Opening date.'),
  mainActivity: CodeAndDescription,
  secondaryActivities: Type.Array(CodeAndDescription, { description: 'Secondary CNAE activities.' }),
  legalNature: CodeAndDescription,
  capital: Type.Number({ minimum: 0, description: 'Share capital, in BRL.' }),
  fiscalSize: StringEnum(STORED_FISCAL_SIZES, { description: 'Size code (porte).' }),
  simplesOption: Type.Boolean({ description: 'Opted into the Simples Nacional tax regime.' }),
  companyAddress: Address,
  companyPhones: Type.Array(Type.String(), { description: 'Company phone numbers, digits only.' }),
  companyEmail: textField('companyEmail', 'Company email, as registered.'),
  partners: Type.Array(Partner, { description: 'Partners (sócios).' }),
} satisfies Record<Field, TSchema>; // every field of the vocabulary, and no other

type Optionals<T extends Record<string, TSchema>> = { [K in keyof T]: TOptional<T[K]> };
const optional = <T extends Record<string, TSchema>>(schemas: T) =>
  Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, Type.Optional(schema)])) as Optionals<T>;

/** The record a cascade built: what was sent and what providers found. */
export const EnrichedFields = ClosedObject('The record: the fields sent and the fields found.', optional(fieldSchemas), {
  title: 'EnrichedFields',
});

/** Field → who gave its value. */
export const FieldSources = ClosedObject(
  'Field → the provider that gave its value, or `input` for what was sent.',
  optional(
    Object.fromEntries(ENRICH_FIELDS.map((field) => [field, Type.String({ description: `Who gave \`${field}\`.` })])) as Record<Field, TString>,
  ),
  { title: 'FieldSources' },
);

export const OUTCOMES = ['found', 'not_found', 'failed', 'skipped'] as const;

/** One provider the cascade reached, or chose not to call. */
export const Attempt = ClosedObject(
  'One provider the cascade reached, or chose not to call.',
  {
    provider: Type.String({ description: 'The provider id (see the catalog).' }),
    outcome: StringEnum(OUTCOMES, {
      description: '`found` (returned data), `not_found`, `failed` (an error), or `skipped` (not called: budget, circuit open, not configured).',
    }),
    fields: Type.Array(StringEnum(ENRICH_FIELDS), { description: 'Fields this provider filled (the first value found wins).' }),
    cost: Type.Integer({ minimum: 0, description: 'Credits this call costs: its price when it returned data, else 0.' }),
    ms: Type.Integer({ minimum: 0, description: 'How long the call took, in milliseconds.' }),
    error: Type.Optional(Type.String({ description: 'Why it failed or was skipped.' })),
  },
  { title: 'ProviderAttempt' },
);

export const EnrichResult = ClosedObject(
  'The enriched record, with the provenance of its fields.',
  {
    record: EnrichedFields,
    sources: FieldSources,
    providers: Type.Array(Attempt, { description: 'Every provider the cascade reached, in order.' }),
    confidence: ClosedObject(
      "Field → the confidence (0 to 1) the provider that gave it stated: Hunter's score, People Data Labs' likelihood, a verifier's score. Absent where the provider states none.",
      optional(
        Object.fromEntries(
          ENRICH_FIELDS.map((field) => [field, Type.Number({ minimum: 0, maximum: 1, description: `How sure the provider of \`${field}\` is.` })]),
        ) as Record<Field, ReturnType<typeof Type.Number>>,
      ),
      { title: 'FieldConfidence' },
    ),
    creditsCharged: CreditsCharged,
    cached: Type.Boolean({ description: 'Answered from the workspace\'s stored answer for this subject: charged 0, no provider called.' }),
    enrichedAt: Type.String({ format: 'date-time', description: 'When the answer was paid for (now, unless `cached`).' }),
    missing: Type.Optional(
      Type.Array(StringEnum(ENRICH_FIELDS), { description: 'The `goalFields` still without a value (only when `goalFields` was sent).' }),
    ),
    message: Type.Optional(
      Type.String({ description: 'When no provider could be tried: which keys would enable which of the wanted fields.' }),
    ),
  },
  { title: 'EnrichResult' },
);
