/** Cascade enrichment of one person or company record. */
import { Type } from '@sinclair/typebox';
import { OpenObject, OptionalText as text, OptionalTexts as texts } from './common.ts';

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
    goalFields: texts('The fields wanted; providers that cannot add them are not called.'),
    providerOrder: texts('Providers to try, in order of preference.'),
    onlyListed: Type.Optional(Type.Boolean({ description: 'Call only the providers named in `providerOrder`.' })),
  },
  {
    additionalProperties: false,
    // Each branch names one identifier, so a failure reads "at least one of … is required".
    anyOf: ENRICH_IDENTIFIERS.map((field) => ({ required: [field] })),
    description: `The record to enrich. At least one identifier is required: ${ENRICH_IDENTIFIERS.join(', ')}.`,
  },
);

export const EnrichedRecord = OpenObject('The enriched record, with the provenance of its fields.');
