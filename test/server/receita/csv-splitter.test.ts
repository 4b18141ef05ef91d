/**
 * The release's CSV splitter reads what papaparse read (quotes, doubled quotes, line breaks in
 * fields, `\r\n`), whatever pieces the text comes in, and leaves a row in the Receita's own form
 * unsplit past its first fields only when splitting the rest gives the same fields.
 */
import { describe, expect, it } from 'vitest';
import { CsvSplitter, quotedFields, type SplitOptions } from '../../../server/receita/import/csv-splitter.ts';

function split(text: string, piece: number, options: SplitOptions = {}) {
  const splitter = new CsvSplitter(';', options);
  const rows = [];
  for (let at = 0; at < text.length; at += piece) rows.push(...splitter.push(text.slice(at, at + piece)));
  rows.push(...splitter.push('', true));
  return rows.map(({ fields, line, quoted }) => ({ fields: quoted === undefined ? fields : quotedFields(quoted), line }));
}

const text = '"a";"b";"c"\r\n"d""e";"f\ng";h\n\n"i";"";"j"\n"k" ;"l";"m"\n"unclosed;x\n';
const rows = [
  { fields: ['a', 'b', 'c'], line: 1 },
  { fields: ['d"e', 'f\ng', 'h'], line: 2 },
  { fields: [''], line: 4 },
  { fields: ['i', '', 'j'], line: 5 },
  { fields: ['k', 'l', 'm'], line: 6 },
  { fields: ['unclosed;x\n'], line: 7 },
];

describe('the release CSV splitter', () => {
  it('splits rows as papaparse did, in any pieces', () => {
    for (const piece of [1, 2, 3, 7, 1000]) expect(split(text, piece)).toEqual(rows);
  });

  it('gives the same fields when it leaves rows of quoted fields unsplit', () => {
    for (const piece of [1, 2, 3, 7, 1000]) expect(split(text, piece, { splitFirst: 1, columns: 3 })).toEqual(rows);
    const splitter = new CsvSplitter(';', { splitFirst: 1, columns: 3 });
    const [quoted, escaped, wrongCount] = splitter.push('"a";"b";"c"\n"d""e";"f";"g"\n"x";"y"\n', true);
    expect(quoted).toEqual({ fields: ['a'], line: 1, quoted: 'a";"b";"c' });
    expect(escaped!.quoted).toBeUndefined();
    expect(wrongCount).toEqual({ fields: ['x', 'y'], line: 3 });
  });
});
