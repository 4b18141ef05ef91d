/**
 * The company filters' patterns (shared/schemas/filter-patterns.ts) say exactly what the search
 * takes: the letters folding keeps, listed by hand, are checked against foldText for every code
 * point, and each pattern against the search's own reading of a value.
 */
import { describe, expect, it } from 'vitest';
import { foldText } from '../../shared/fold-text.ts';
import {
  CNAE_PATTERN,
  codeDigits,
  FOLDS_TO_LETTER_OR_DIGIT,
  LEGAL_NATURE_PATTERN,
  LETTER_OR_DIGIT_PATTERN,
  SIZE_PATTERN,
  SIZE_WORDS,
  STATE_PATTERN,
  STATES,
} from '../../shared/schemas/filter-patterns.ts';

/** As Ajv compiles a schema's pattern. */
const compiled = (pattern: string) => new RegExp(pattern, 'u');

describe('the company filters’ patterns', () => {
  it('a character is a letter or digit to the pattern exactly when folding keeps something of it', () => {
    const letter = compiled(`^[${FOLDS_TO_LETTER_OR_DIGIT}]$`);
    const wrong: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (letter.test(char) !== (foldText(char) !== '')) wrong.push(code.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('a text has something to search exactly when folding leaves a letter or digit, and no NUL', () => {
    const pattern = compiled(LETTER_OR_DIGIT_PATTERN);
    for (const text of ['São Paulo', 'ÁGUA', 'a', '7', ' -x- ', 'Ångström', 'K']) expect([text, pattern.test(text)]).toEqual([text, true]);
    for (const text of ['', ' ', '--', '***', '\u0301', 'ß', 'Ø', '€', 'a\u0000b']) expect([text, pattern.test(text)]).toEqual([text, false]);
  });

  it('state: the 27 UFs and EX, in any case', () => {
    const pattern = compiled(STATE_PATTERN);
    for (const state of STATES) expect(pattern.test(state) && pattern.test(state.toLowerCase()) && pattern.test(`${state[0]}${state[1]!.toLowerCase()}`)).toBe(true);
    for (const state of ['XX', 'S', 'SPX', 'ſP', ' SP']) expect([state, pattern.test(state)]).toEqual([state, false]);
  });

  it('cnaes and legalNatureCodes: their digits, with the separators they are written with', () => {
    const cnae = compiled(CNAE_PATTERN);
    for (const code of ['62', '6201', '62015', '6201501', '6201-5/01', '62.01-5', ' 62 ']) {
      expect([code, cnae.test(code), [2, 4, 5, 7].includes(codeDigits(code).length)]).toEqual([code, true, true]);
    }
    for (const code of ['', '620', '620150', '62015011', '62a1', '6201\t501']) expect([code, cnae.test(code)]).toEqual([code, false]);
    const nature = compiled(LEGAL_NATURE_PATTERN);
    expect(['2062', '206-2', '20.6-2'].map((code) => nature.test(code) && codeDigits(code))).toEqual(['2062', '2062', '2062']);
    expect(['206', '20622', 'abcd'].some((code) => nature.test(code))).toBe(false);
  });

  it('sizes: each word the search knows, in any case, and nothing else', () => {
    const pattern = compiled(SIZE_PATTERN);
    for (const word of Object.keys(SIZE_WORDS)) expect(pattern.test(word) && pattern.test(word.toUpperCase())).toBe(true);
    for (const word of ['Média', 'EPP', 'Não Informado']) expect(Object.hasOwn(SIZE_WORDS, word.toLowerCase()) && pattern.test(word)).toBe(true);
    for (const word of ['huge', 'micro ', 'constructor', '']) expect([word, pattern.test(word)]).toEqual([word, false]);
  });
});
