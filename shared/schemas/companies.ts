/** Company search (Brazil's open registry data and providers), its stream, and the CNPJ batch lookup. */
import { Type } from '@sinclair/typebox';
import {
  ClosedObject,
  CreditsCharged,
  DateOnly,
  Nullable,
  NullableText,
  SEARCH_TEXT_MAX,
  SearchText as text,
  SearchTexts as texts,
  SourceCount,
  StringEnum,
} from './common.ts';
import {
  Address,
  Cnpj,
  CnpjInput,
  CodeAndDescription,
  ESTABLISHMENT_TYPES,
  Partner,
  PhoneNumber,
  REGISTRATION_STATUSES,
  STORED_FISCAL_SIZES,
  TaxOption,
  TaxRegime,
} from './registry.ts';
import { AGE_BANDS, TAX_REGIMES } from '../registry-codes.ts';
import { CNAE_PATTERN, LEGAL_NATURE_PATTERN, LETTER_OR_DIGIT_PATTERN, SIZE_PATTERN, STATE_PATTERN } from './filter-patterns.ts';
import { NextCursor, SearchCursor, SearchLimit, StreamPage, streamDoneProperties } from './search.ts';

export { ESTABLISHMENT_TYPES, REGISTRATION_STATUSES } from './registry.ts';

/** `00` (not informed) since issue 22; `02` is the old layout's code for micro. */
export const FISCAL_SIZES = ['00', '01', '02', '03', '05'] as const;

const flag = (description: string) => Type.Optional(Type.Boolean({ description }));
/** Share capital in BRL: a quadrillion is far past any company's, and below 2^53. */
const capital = (description: string) => Type.Optional(Type.Number({ minimum: 0, maximum: 1e15, description }));
const date = (description: string) => Type.Optional(Type.String({ format: 'date', description }));

/** The sources of `companyOrder`: the imported registry, and BrasilAPI (lookups by CNPJ only). */
export const COMPANY_SOURCES = ['receita_federal', 'brasilapi'] as const;

/** The company search's filters: the search, its stream and the export take them. */
/** A filter's text that must have something to search (a letter or digit); `words`: and a word of two or more. */
const searched = (description: string) =>
  Type.Optional(Type.String({ maxLength: SEARCH_TEXT_MAX, pattern: LETTER_OR_DIGIT_PATTERN, description }));
const coded = (pattern: string, description: string) =>
  Type.Optional(Type.Array(Type.String({ maxLength: SEARCH_TEXT_MAX, pattern }), { description }));

export const companyFilters = {
  name: searched(
    'Legal or trade name, by word (`padar*`: a prefix). At least one word of two or more letters or digits other than ' +
      'de, da, do, das, dos, e, em, a, o, the, of, and (which no search reads).',
  ),
  industry: text('Industry or activity (known ones become CNAEs).'),
  location: searched('Location, free text: a city, a state (UF) or both, e.g. `Curitiba, PR`; not another state or city than `state` and `city` name.'),
  partnerName: searched('Partner (sócio) name, by word: at least one word, as for `name`.'),
  partnerDocument: Type.Optional(
    Type.String({
      maxLength: SEARCH_TEXT_MAX,
      format: 'partner-document',
      description: "Partner document: a CPF (11 digits, or masked as the registry publishes it, `***NNNNNN**`) or a CNPJ (its check digits matching).",
    }),
  ),
  city: searched('City.'),
  keywords: texts('Keywords.'),
  sizes: coded(SIZE_PATTERN, 'Size ranges: micro, small, medium, large (or ME, EPP, demais), in any case.'),
  cnaes: coded(CNAE_PATTERN, 'CNAE activity codes: 7 digits (6201-5/01), or a 2-, 4- or 5-digit division, group or class.'),
  legalNatureCodes: coded(LEGAL_NATURE_PATTERN, 'Legal nature codes, 4 digits (2062 or 206-2).'),
  companyOrder: Type.Optional(
    Type.Array(StringEnum(COMPANY_SOURCES), { description: 'Sources, in order.' }),
  ),
  registrationStatuses: Type.Optional(
    Type.Array(StringEnum(REGISTRATION_STATUSES), { description: 'Registration statuses.' }),
  ),
  establishmentTypes: Type.Optional(
    Type.Array(StringEnum(ESTABLISHMENT_TYPES), { description: 'Head office or branch.' }),
  ),
  fiscalSizes: Type.Optional(
    Type.Array(StringEnum(FISCAL_SIZES), {
      description: 'Porte: `01` micro, `03` EPP, `05` other, `00` none.',
    }),
  ),
  // Issue 22: filters on the rest of the registry's data.
  meiOption: flag('MEI now.'),
  partnerAgeBands: Type.Optional(
    Type.Array(StringEnum(AGE_BANDS), {
      description: "A partner's age band: `1` 0-12, `2` 13-20, `3` 21-30 … `9` 80+, `0` n/a.",
    }),
  ),
  federativeEntity: searched('Federative entity of a public body, e.g. `UNIÃO`.'),
  taxRegime: Type.Optional(
    Type.Object(
      {
        regime: StringEnum(TAX_REGIMES, { description: 'Form of taxation.' }),
        year: Type.Optional(Type.Integer({ minimum: 1900, maximum: 2100, description: 'Year (any when absent).' })),
      },
      { additionalProperties: false, description: 'Taxed under this regime.' },
    ),
  ),
  capitalMin: capital('Min share capital, BRL; not above `capitalMax`.'),
  capitalMax: capital('Max share capital, BRL.'),
  simpleOption: flag('In the Simples Nacional now.'),
  hasPhone: flag('Has a phone number.'),
  hasEmail: flag('Has an email address.'),
  openingDateMin: date('Opened on or after; not after `openingDateMax`.'),
  openingDateMax: date('Opened on or before.'),
  state: Type.Optional(
    Type.String({ minLength: 2, maxLength: 2, pattern: STATE_PATTERN, description: 'State (UF), e.g. `SP` (any case); `EX` for abroad.' }),
  ),
};

export const CompanySearchBody = Type.Object(
  { ...companyFilters, limit: SearchLimit(20), cursor: SearchCursor },
  { additionalProperties: false, description: 'Company search filters, all optional.' },
);

/** The stream declares a higher limit than the plain search. */
export const CompanyStreamBody = Type.Object(
  { ...companyFilters, limit: SearchLimit(25) },
  { additionalProperties: false, description: 'Company search filters, all optional.' },
);

/**
 * A company establishment as every company operation returns it, whichever source it came from:
 * every field present, null when the source does not know it.
 */
export const Company = ClosedObject(
  'A company establishment of Brazil\'s registry.',
  {
    cnpj: Cnpj,
    root: Type.String({ pattern: '^[0-9A-Z]{8}$', description: 'The first 8 characters, shared by the head office and its branches.' }),
    name: Type.String({ description: 'Legal name (razão social).' }),
    tradeName: NullableText('Trade name (nome fantasia).'),
    establishment: Nullable(StringEnum(ESTABLISHMENT_TYPES), 'Head office or branch.'),
    registrationStatus: Nullable(StringEnum(REGISTRATION_STATUSES), 'Registration status (situação cadastral).'),
    registrationStatusDate: Nullable(DateOnly('Since when it has this status.')),
    registrationStatusReason: Nullable(CodeAndDescription, 'Why it has this status (motivo).'),
    openingDate: Nullable(DateOnly('Opening date.')),
    mainActivity: Nullable(CodeAndDescription, 'Main CNAE activity.'),
    secondaryActivities: Type.Array(CodeAndDescription, { description: 'Secondary CNAE activities.' }),
    legalNature: Nullable(CodeAndDescription, 'Legal nature (natureza jurídica).'),
    capital: Nullable(Type.Number({ minimum: 0 }), 'Share capital, in BRL.'),
    fiscalSize: Nullable(StringEnum(STORED_FISCAL_SIZES), 'Size code (porte): `01` micro, `03` small (EPP), `05` other, `00` not informed.'),
    simplesOption: Nullable(Type.Boolean(), 'Opted into the Simples Nacional tax regime.'),
    meiOption: Nullable(Type.Boolean(), 'Registered as MEI (individual micro-entrepreneur).'),
    // Issue 22: every other field of Empresas, Estabelecimentos and Simples, and the tax regimes.
    size: Nullable(CodeAndDescription, 'Size (porte) with its description: `00` not informed, `01` micro, `03` small (EPP), `05` other.'),
    responsibleQualification: Nullable(CodeAndDescription, 'Qualification of the person answering for the company.'),
    federativeEntity: NullableText('Responsible federative entity (ente federativo responsável) of a public body, e.g. `UNIÃO`.'),
    specialSituation: NullableText('Special situation (situação especial), e.g. `RECUPERACAO JUDICIAL`.'),
    specialSituationDate: Nullable(DateOnly('Since when it is in that special situation.')),
    phone1: Nullable(PhoneNumber, 'First phone, with its area code.'),
    phone2: Nullable(PhoneNumber, 'Second phone, with its area code.'),
    fax: Nullable(PhoneNumber, 'Fax, with its area code.'),
    foreignCity: NullableText('City abroad (nome da cidade no exterior), for an establishment abroad.'),
    country: Nullable(CodeAndDescription, "Country (the release's country table), for an establishment abroad."),
    simples: Nullable(TaxOption, 'Simples Nacional option with its dates; null when the Simples file has no row for the company.'),
    mei: Nullable(TaxOption, 'MEI option with its dates; null when the Simples file has no row for the company.'),
    taxRegimes: Type.Array(TaxRegime, { description: 'Forms of taxation by year (the tax-regime files), newest year first.' }),
    address: Address,
    phones: Type.Array(Type.String({ pattern: '^[0-9]+$' }), { description: 'Phone numbers, digits only: area code then number.' }),
    email: NullableText('Email address, as registered.'),
    partners: Type.Array(Partner, { description: 'Partners (sócios) of the company.' }),
    release: Nullable(
      Type.String({ pattern: '^[0-9]{4}-[0-9]{2}$' }),
      'The open-data release it was imported from, `YYYY-MM`; null when a remote source answered.',
    ),
    source: Type.String({ description: 'The data source that returned it: `receita_federal` or `brasilapi`.' }),
  },
  { title: 'Company' },
);

/** A CNAE activity the search's `industry`, `keywords` or `cnaes` stood for. */
export const Activity = ClosedObject(
  'A CNAE activity the search filtered on.',
  {
    code: Type.String({ pattern: '^[0-9]{7}$', description: 'CNAE subclass, 7 digits.' }),
    description: Type.String({ description: 'Its description (empty for a code the release does not list).' }),
  },
  { title: 'Activity' },
);

/** What the search understood of `industry`, `keywords` and `cnaes`. */
const understood = {
  activities: Type.Array(Activity, { description: 'The CNAE activities the activity filters stood for.' }),
  nameTerms: Type.Array(Type.String(), {
    description: 'Industry or keyword terms that named no activity and were matched against company names instead.',
  }),
};

export const CompanyResults = ClosedObject(
  'Companies found.',
  {
    results: Type.Array(Company, { description: 'The companies, in CNPJ order.' }),
    ...understood,
    sources: Type.Array(SourceCount, { description: 'What each source added, in `companyOrder`.' }),
    nextCursor: NextCursor,
    creditsCharged: CreditsCharged,
  },
  { title: 'CompanyResults' },
);

export const CompanyPage = StreamPage(Company, 'CompanyPage');

/** The company stream's `done` also says what the search understood of `industry` and `name`. */
export const CompanyStreamDone = ClosedObject(
  'Payload of the `done` event that ends the company stream.',
  {
    ...streamDoneProperties,
    ...understood,
  },
  { title: 'CompanyStreamDone' },
);

export const CnpjBatchBody = Type.Object(
  {
    cnpjs: Type.Array(CnpjInput('A CNPJ; one whose check digits are wrong is answered in `invalid`.'), {
      minItems: 1,
      maxItems: 500,
      description: 'CNPJs to look up, 1 to 500, with or without punctuation. Duplicates: the first is kept.',
    }),
  },
  { additionalProperties: false },
);

const CnpjSource = ClosedObject(
  'What one source found.',
  {
    source: Type.String({ description: '`receita_federal` (the imported registry), then `brasilapi` when enabled.' }),
    count: Type.Integer({ minimum: 0, description: 'Companies this source found.' }),
    checked: Type.Optional(
      Type.Integer({ minimum: 0, description: 'CNPJs BrasilAPI was asked about (it answers about one a second).' }),
    ),
    error: Type.Optional(Type.String({ description: 'Why this source failed, when it did.' })),
  });

  export const CnpjBatchResults = ClosedObject('Companies found by CNPJ.', {
    results: Type.Array(Company, { description: 'The companies found, in the order asked.' }),
    notFound: Type.Array(Cnpj, { description: 'Valid CNPJs that were not found.' }),
    invalid: Type.Array(Type.String(), { description: 'CNPJs whose check digits are wrong (digits only).' }),
    sources: Type.Array(CnpjSource, { description: 'What each source found.' }),
    creditsCharged: CreditsCharged,
  },
  { title: 'CnpjBatchResults' },
);
