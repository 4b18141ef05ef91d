/**
 * What Brazil's company registry (Receita Federal's open data) publishes about an establishment,
 * shared by the company records and the enrichment fields taken from them.
 */
import { Type } from '@sinclair/typebox';
import { ClosedObject, DateOnly, Nullable, NullableText } from './common.ts';

export const REGISTRATION_STATUSES = ['ATIVA', 'BAIXADA', 'INAPTA', 'NULA', 'SUSPENSA'] as const;
export const ESTABLISHMENT_TYPES = ['MATRIZ', 'FILIAL'] as const;

/** 14 characters without punctuation: letters or digits, then two check digits (IN RFB 2.229/2024). */
export const CNPJ_PATTERN = '^[0-9A-Z]{12}[0-9]{2}$';

export const Cnpj = Type.String({
  pattern: CNPJ_PATTERN,
  description: 'A CNPJ without punctuation: 14 characters, letters allowed in the first 12 (alphanumeric CNPJs, July 2026).',
});

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
  },
  { title: 'Partner' },
);

