/** Cascade enrichment of one person or company record. */
import { Type } from '@sinclair/typebox';
import { OpenObject, OptionalText as text, StringEnum } from './common.ts';

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

/** A per-request cap on credits, a backwards-compatible addition to the interface. */
export const MaxCredits = Type.Optional(
  Type.Integer({
    minimum: 0,
    description: 'Stop before spending more than this many credits on this request (a budget guard).',
  }),
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

export const EnrichBody = Type.Object(
  {
    email: Type.Optional(Type.String({ format: 'email', description: 'Work email.' })),
    personalEmail: Type.Optional(Type.String({ format: 'email', description: 'Personal email.' })),
    linkedinUrl: Type.Optional(Type.String({ format: 'uri', description: 'Professional-network profile URL.' })),
    phone: text('Phone number.'),
    fullName: text("The person's full name."),
    companyName: text('Company name.'),
    companyDomain: text('Company web domain, e.g. `acme.com`.'),
    cnpj: text('Company CNPJ, with or without punctuation.'),
    goalFields: Type.Optional(
      Type.Array(StringEnum(ENRICH_FIELDS), {
        description: 'The fields wanted (all when absent); providers that cannot add one of them are not called.',
      }),
    ),
    providerOrder: Type.Optional(
      Type.Array(StringEnum(PROVIDER_IDS), {
        description: 'Providers to try first, in this order; the others follow in the default order (by cost, then quality).',
      }),
    ),
    onlyListed: Type.Optional(
      Type.Boolean({ description: 'Call only the providers named in `providerOrder`, none of the others.' }),
    ),
    maxCredits: MaxCredits,
  },
  {
    additionalProperties: false,
    // Each branch names one identifier, so a failure reads "at least one of … is required".
    anyOf: ENRICH_IDENTIFIERS.map((field) => ({ required: [field] })),
    description: `The record to enrich. At least one identifier is required: ${ENRICH_IDENTIFIERS.join(', ')}.`,
  },
);

export const EnrichedRecord = OpenObject('The enriched record, with the provenance of its fields.');
