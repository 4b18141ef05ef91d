/** Company search (Brazil's open registry data and providers), its stream, and the CNPJ batch lookup. */
import { Type } from '@sinclair/typebox';
import { OpenObject, OptionalText as text, OptionalTexts as texts, StringEnum } from './common.ts';
import { SearchLimit, StreamDone, StreamPage } from './search.ts';

export const REGISTRATION_STATUSES = ['ATIVA', 'BAIXADA', 'INAPTA', 'NULA', 'SUSPENSA'] as const;
export const ESTABLISHMENT_TYPES = ['MATRIZ', 'FILIAL'] as const;
export const FISCAL_SIZES = ['01', '02', '03', '05'] as const;

const flag = (description: string) => Type.Optional(Type.Boolean({ description }));
const capital = (description: string) => Type.Optional(Type.Number({ minimum: 0, description }));
const date = (description: string) => Type.Optional(Type.String({ format: 'date', description }));

const companyFilters = {
  name: text('Company name (legal or trade name).'),
  industry: text('Industry or activity; known activities are converted to CNAE codes.'),
  location: text('Location, free text.'),
  partnerName: text('Name of a partner (sócio).'),
  partnerDocument: text('Document of a partner (sócio).'),
  city: text('City.'),
  keywords: texts('Keywords.'),
  sizes: texts('Company size ranges.'),
  cnaes: texts('CNAE activity codes.'),
  legalNatureCodes: texts('Legal nature codes (natureza jurídica, 4 digits).'),
  companyOrder: texts('Data sources to query, in order of preference.'),
  registrationStatuses: Type.Optional(
    Type.Array(StringEnum(REGISTRATION_STATUSES), { description: 'Registration statuses (situação cadastral).' }),
  ),
  establishmentTypes: Type.Optional(
    Type.Array(StringEnum(ESTABLISHMENT_TYPES), { description: 'Head office (`MATRIZ`) or branch (`FILIAL`).' }),
  ),
  fiscalSizes: Type.Optional(
    Type.Array(StringEnum(FISCAL_SIZES), {
      description: 'Registry size codes (porte): `01` micro, `03` small (EPP), `05` other.',
    }),
  ),
  capitalMin: capital('Minimum share capital, in BRL.'),
  capitalMax: capital('Maximum share capital, in BRL.'),
  simpleOption: flag('Opted into the Simples Nacional tax regime.'),
  hasPhone: flag('Has a phone number.'),
  hasEmail: flag('Has an email address.'),
  openingDateMin: date('Opened on or after this date (YYYY-MM-DD).'),
  openingDateMax: date('Opened on or before this date (YYYY-MM-DD).'),
  state: Type.Optional(
    Type.String({ minLength: 2, maxLength: 2, description: 'State (UF), exactly 2 characters, e.g. `SP`.' }),
  ),
};

export const CompanySearchBody = Type.Object(
  { ...companyFilters, limit: SearchLimit(20) },
  { additionalProperties: false, description: 'Company search filters, all optional.' },
);

/** The stream declares a higher limit than the plain search. */
export const CompanyStreamBody = Type.Object(
  { ...companyFilters, limit: SearchLimit(25) },
  { additionalProperties: false, description: 'Company search filters, all optional.' },
);

/** 14 characters without punctuation: letters or digits, then two check digits (IN RFB 2.229/2024). */
export const CNPJ_PATTERN = '^[0-9A-Z]{12}[0-9]{2}$';

const Cnpj = Type.String({
  pattern: CNPJ_PATTERN,
  description: 'A CNPJ without punctuation: 14 characters, letters allowed in the first 12 (alphanumeric CNPJs, July 2026).',
});

export const Company = OpenObject('A company.', {
  cnpj: Cnpj,
  name: Type.String({ description: 'Legal name.' }),
  source: Type.String({ description: 'The data source that returned the company.' }),
});

export const CompanyResults = OpenObject('Companies found.', { results: Type.Array(Company) });

export const CompanyPage = StreamPage(Company);

/** The company stream's `done` also says what the search understood of `industry` and `name`. */
export const CompanyStreamDone = OpenObject(StreamDone.description ?? '', {
  ...StreamDone.properties,
  activities: Type.Array(OpenObject('A CNAE activity an `industry` or keyword term stood for.')),
  nameTerms: Type.Array(Type.String(), { description: 'Terms that named no activity, looked for in company names.' }),
});

export const CnpjBatchBody = Type.Object(
  {
    cnpjs: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 500,
      description: 'CNPJs to look up, 1 to 500, with or without punctuation. Duplicates: the first is kept.',
    }),
  },
  { additionalProperties: false },
);

export const CnpjBatchResults = OpenObject('Companies found by CNPJ.', {
  results: Type.Array(Company),
  notFound: Type.Array(Cnpj, { description: 'Valid CNPJs that were not found.' }),
  invalid: Type.Array(Type.String(), { description: 'Identifiers that are not valid CNPJs.' }),
});
