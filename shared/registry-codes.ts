/**
 * The fixed code lists of the Receita Federal's CNPJ layout (cnpj-metadados.pdf), which no
 * release file carries: one table each, here, for the importer, the search filters and the
 * schema alike. Codes the release's own files describe (CNAEs, countries, qualifications,
 * legal natures, reasons, municipalities) are never copied here: they come from the release.
 * Descriptions keep the layout's wording, in upper case as the release writes its tables.
 */

/** `porte_empresa` (Empresas). The data writes `00/01/03/05`; the PDF misprints the first two as 1 and 2. */
export const COMPANY_SIZE_CODES = {
  '00': 'NÃO INFORMADO',
  '01': 'MICRO EMPRESA',
  '03': 'EMPRESA DE PEQUENO PORTE',
  '05': 'DEMAIS',
} as const;

/** `identificador_socio` (Sócios). */
export const PARTNER_TYPE_CODES = {
  '1': 'PESSOA JURÍDICA',
  '2': 'PESSOA FÍSICA',
  '3': 'ESTRANGEIRO',
} as const;

/** `faixa_etaria` (Sócios): the partner's age band. */
export const AGE_BAND_CODES = {
  '0': 'NÃO SE APLICA',
  '1': '0 A 12 ANOS',
  '2': '13 A 20 ANOS',
  '3': '21 A 30 ANOS',
  '4': '31 A 40 ANOS',
  '5': '41 A 50 ANOS',
  '6': '51 A 60 ANOS',
  '7': '61 A 70 ANOS',
  '8': '71 A 80 ANOS',
  '9': 'MAIOR DE 80 ANOS',
} as const;

export type FixedCodeTable = Readonly<Record<string, string>>;

export const AGE_BANDS = Object.keys(AGE_BAND_CODES) as Array<keyof typeof AGE_BAND_CODES>;

/**
 * The tax regimes of the yearly tax-regime files (regime tributário), as the `taxRegime` search
 * filter names them; a row's `forma_de_tributacao` stands for every regime whose words it holds
 * (`LUCRO REAL/ARBITRADO` is both Lucro Real and Lucro Arbitrado).
 */
export const TAX_REGIME_WORDS = {
  lucro_real: 'real',
  lucro_presumido: 'presumido',
  lucro_arbitrado: 'arbitrado',
  imune: 'imune',
  isenta: 'isenta',
} as const;

export type TaxRegimeKey = keyof typeof TAX_REGIME_WORDS;
export const TAX_REGIMES = Object.keys(TAX_REGIME_WORDS) as TaxRegimeKey[];
