/**
 * What Brazil's company registry (Receita Federal's open data) publishes about an establishment,
 * shared by the company records and the enrichment fields taken from them.
 */
import { Type } from '@sinclair/typebox';
import { CNPJ_PATTERN } from '../cnpj.ts';
import { ClosedObject, DateOnly, Nullable, NullableText } from './common.ts';

export const REGISTRATION_STATUSES = ['ATIVA', 'BAIXADA', 'INAPTA', 'NULA', 'SUSPENSA'] as const;
export const ESTABLISHMENT_TYPES = ['MATRIZ', 'FILIAL'] as const;

export const Cnpj = Type.String({
  pattern: CNPJ_PATTERN,
  // The check digits, which no pattern can compute: see CnpjInput.
  format: 'cnpj',
  description: 'A CNPJ without punctuation: 14 characters, letters allowed in the first 12 (alphanumeric CNPJs, July 2026), then two check digits that match.',
});

/**
 * A CNPJ as a client writes it: punctuation allowed (`12.ABC.345/01DE-35`), any case. Its format
 * `cnpj` (14 characters once unpunctuated, letters or digits then two check digits that match) is
 * checked by the handler rather than by schema validation, so that one 400 `invalid_cnpj` names
 * every malformed identifier; JSON Schema cannot compute check digits anyway.
 */
export const CnpjInput = (description: string) => Type.String({ format: 'cnpj', maxLength: 64, description });

/** Registry size codes (porte) as stored: `00` is "not informed". */
export const STORED_FISCAL_SIZES = ['00', '01', '03', '05'] as const;

/** A code of one of the registry's tables, with its description in the release's own table. */
export const CodeAndDescription = ClosedObject(
  'A registry code and its description (null when the release\'s table lacks the code).',
  { code: Type.String({ description: 'The code, zero-padded to its width.' }), description: NullableText('Its description.') },
  { title: 'CodeAndDescription' },
);

export const Address = ClosedObject(
  'The establishment\'s address, as registered.',
  {
    street: NullableText('Street type and name.'),
    number: NullableText('Number.'),
    complement: NullableText('Complement.'),
    district: NullableText('District (bairro).'),
    zipCode: Nullable(Type.String({ pattern: '^[0-9]{8}$' }), 'CEP, 8 digits.'),
    city: NullableText('City.'),
    cityCode: Nullable(Type.String({ pattern: '^[0-9]{4}$' }), "Receita Federal's 4-digit municipality code (not IBGE's)."),
    state: NullableText('State (UF), or `EX` abroad.'),
    country: NullableText('Country, for an establishment abroad.'),
  },
  { title: 'Address' },
);

export const Partner = ClosedObject(
  'A partner (sócio) of the company.',
  {
    name: Type.String({ description: 'Name of the person or company.' }),
    document: NullableText("A company partner's CNPJ, or a person's CPF as published: masked `***NNNNNN**`."),
    qualification: NullableText('Qualification (e.g. Sócio-Administrador).'),
    since: Nullable(DateOnly('Entry into the company.')),
    // Issue 22: the rest of the Sócios row.
    type: Nullable(CodeAndDescription, 'Type (identificador de sócio): `1` company, `2` person, `3` foreign.'),
    qualificationCode: Nullable(Type.String({ pattern: '^[0-9]{2}$' }), 'Code of the qualification, 2 digits.'),
    country: Nullable(CodeAndDescription, "A foreign partner's country (the release's country table)."),
    ageBand: Nullable(CodeAndDescription, 'Age band (faixa etária): `0` not applicable, `1` 0 to 12 years … `9` over 80.'),
    legalRepresentative: Nullable(
      ClosedObject('Who represents the partner (a minor, a foreigner).', {
        document: NullableText('CPF, masked as published: `***NNNNNN**`.'),
        name: NullableText('Name.'),
        qualification: Nullable(CodeAndDescription, 'Qualification of the representative.'),
      }),
      'The legal representative, or null when there is none (published as `***000000**` with qualification `00`).',
    ),
  },
  { title: 'Partner' },
);

// ---- Issue 22: the other fields of the four main files, and the tax regimes. ----

/** A phone as registered: area code (DDD) and number, digits only. */
export const PhoneNumber = ClosedObject(
  'A phone number as registered.',
  {
    areaCode: Nullable(Type.String({ pattern: '^[0-9]+$' }), 'Area code (DDD).'),
    number: Type.String({ pattern: '^[0-9]+$', description: 'The number, digits only.' }),
  },
  { title: 'PhoneNumber' },
);

/** The Simples file's option for Simples Nacional or MEI. */
export const TaxOption = ClosedObject(
  'An option as the Simples file gives it: the flag (S, N or empty) and its dates.',
  {
    option: Nullable(Type.Boolean(), 'Opted in (`S`), not (`N`), or unknown (empty: "other").'),
    since: Nullable(DateOnly('Date of the option.')),
    until: Nullable(DateOnly('Date of the exclusion.')),
  },
  { title: 'TaxOption' },
);

/** One row of the yearly tax-regime files (Lucro Real, Presumido, Arbitrado, Imunes e Isentas). */
export const TaxRegime = ClosedObject(
  "A year's form of taxation, from the tax-regime files (regime tributário).",
  {
    year: Type.Integer({ minimum: 1900, maximum: 2100, description: 'The calendar year.' }),
    form: Type.String({ description: 'Form of taxation as published, e.g. `LUCRO PRESUMIDO`, `IMUNE DO IRPJ`.' }),
    scpCnpj: Nullable(Type.String(), 'CNPJ of the SCP (sociedade em conta de participação) the row is about, when it is one.'),
    bookkeepingEntries: Nullable(Type.Integer({ minimum: 0 }), 'Number of bookkeeping entries (escriturações).'),
  },
  { title: 'TaxRegime' },
);

