/**
 * The company filters' rules that a pattern can say, written into their schemas so that a request
 * /openapi.json calls valid is one the search takes (schemathesis checks it against the server).
 * Each pattern is anchored and admits no NUL (the body reader refuses one), and `PATTERN_RULES`
 * gives the words a 400 says when a value breaks one. What no pattern can say (a name's words,
 * a CNPJ's check digits, a minimum above its maximum) stays the search's own 400.
 */

/** The states (UF) a company's address may name; EX is abroad. */
export const STATES = [
  'AC', 'AL', 'AM', 'AP', 'BA', 'CE', 'DF', 'ES', 'GO', 'MA', 'MG', 'MS', 'MT', 'PA', 'PB', 'PE', 'PI', 'PR',
  'RJ', 'RN', 'RO', 'RR', 'RS', 'SC', 'SE', 'SP', 'TO', 'EX',
] as const;

/** The words `sizes` takes, in any case, each with the registry's size codes (porte) it stands for. */
export const SIZE_WORDS: Readonly<Record<string, ReadonlyArray<'00' | '01' | '03' | '05'>>> = {
  '00': ['00'], 'nao informado': ['00'], 'não informado': ['00'],
  // `02` is the old layout's code for micro.
  micro: ['01'], me: ['01'], mei: ['01'], microempresa: ['01'], '01': ['01'], '02': ['01'],
  small: ['03'], pequena: ['03'], pequeno: ['03'], epp: ['03'], '03': ['03'],
  medium: ['05'], media: ['05'], 'média': ['05'], large: ['05'], grande: ['05'], demais: ['05'], other: ['05'], '05': ['05'],
};

/**
 * The characters `foldText` keeps (shared/fold-text.ts): ASCII letters and digits, and the letters
 * whose canonical decomposition is one of them plus accents. Listed, not computed, because the
 * add-on bundles this; test/shared/filter-patterns.test.ts checks every code point against foldText.
 */
export const FOLDS_TO_LETTER_OR_DIGIT =
  '0-9A-Za-z\\u00c0-\\u00c5\\u00c7-\\u00cf\\u00d1-\\u00d6\\u00d9-\\u00dd\\u00e0-\\u00e5\\u00e7-\\u00ef\\u00f1-\\u00f6\\u00f9-\\u00fd' +
  '\\u00ff-\\u010f\\u0112-\\u0125\\u0128-\\u0130\\u0134-\\u0137\\u0139-\\u013e\\u0143-\\u0148\\u014c-\\u0151\\u0154-\\u0165' +
  '\\u0168-\\u017e\\u01a0-\\u01a1\\u01af-\\u01b0\\u01cd-\\u01dc\\u01de-\\u01e1\\u01e6-\\u01ed\\u01f0\\u01f4-\\u01f5\\u01f8-\\u01fb' +
  '\\u0200-\\u021b\\u021e-\\u021f\\u0226-\\u0233\\u1e00-\\u1e99\\u1ea0-\\u1ef9\\u212a-\\u212b';

/** Each letter as either case: `sp` → `[Ss][Pp]`. */
function anyCase(word: string): string {
  return [...word].map((c) => (c.toLowerCase() === c.toUpperCase() ? c : `[${c.toUpperCase()}${c.toLowerCase()}]`)).join('');
}

/** Separators a code may be written with: `6201-5/01`, `62.01-5`, `206-2`. */
const SEP = '[-./ ]*';
const DIGIT = `(?:[0-9]${SEP})`;

/** A text with something to search: a letter or digit (which folding keeps). */
export const LETTER_OR_DIGIT_PATTERN = `^[^\\x00]*[${FOLDS_TO_LETTER_OR_DIGIT}][^\\x00]*$`;
export const STATE_PATTERN = `^(?:${STATES.map(anyCase).join('|')})$`;
/** 2, 4, 5 or 7 digits: a CNAE division, group, class or subclass. */
export const CNAE_PATTERN = `^${SEP}${DIGIT}{2}(?:${DIGIT}{2}(?:${DIGIT}(?:${DIGIT}{2})?)?)?$`;
export const LEGAL_NATURE_PATTERN = `^${SEP}${DIGIT}{4}$`;
export const SIZE_PATTERN = `^(?:${Object.keys(SIZE_WORDS).map(anyCase).join('|')})$`;

/** What each pattern asks for, in the words of a 400: `state must be a Brazilian state code…`. */
export const PATTERN_RULES: Readonly<Record<string, string>> = {
  [LETTER_OR_DIGIT_PATTERN]: 'contain a letter or digit',
  [STATE_PATTERN]: 'be a Brazilian state code (UF) such as SP, or EX for abroad',
  [CNAE_PATTERN]: 'be a CNAE code: 7 digits (6201-5/01), or a 2-, 4- or 5-digit division, group or class',
  [LEGAL_NATURE_PATTERN]: 'be a 4-digit legal nature code such as 2062 (206-2)',
  [SIZE_PATTERN]: 'be one of micro, small, medium, large (or ME, EPP, demais)',
};

/** Removes a code's separators: `6201-5/01` → `6201501`. */
export const codeDigits = (code: string): string => code.replace(/[-./ ]/g, '');
