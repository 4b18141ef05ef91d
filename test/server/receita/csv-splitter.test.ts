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

describe('a line that never ends', () => {
  it('is dropped up to its next line break and reported once, however many pieces it comes in', () => {
    const overlong: number[] = [];
    const splitter = new CsvSplitter(';', { maxRowChars: 1000, onOverlong: (line) => overlong.push(line) });
    const out = [...splitter.push('"a";"b"\n"c')];
    // 50,000 characters without a break, in pieces: each would otherwise be rescanned from the row's start.
    for (let i = 0; i < 500; i++) out.push(...splitter.push('x'.repeat(100)));
    out.push(...splitter.push('tail of the long line\n"d";"e"\n'), ...splitter.push('', true));
    expect(overlong).toEqual([2]);
    expect(out.map(({ fields, line }) => ({ fields, line }))).toEqual([
      { fields: ['a', 'b'], line: 1 },
      { fields: ['d', 'e'], line: 3 },
    ]);
  });

  it('an unclosed quote is cut at its first line break once too long, and the rows after it are read', () => {
    const overlong: number[] = [];
    const splitter = new CsvSplitter(';', { maxRowChars: 100, onOverlong: (line) => overlong.push(line) });
    const rows = [...splitter.push(`"open;${'y'.repeat(200)}\nf;g\n`), ...splitter.push('h;i\n', true)];
    expect(overlong).toEqual([1]);
    expect(rows.map(({ fields, line }) => ({ fields, line }))).toEqual([
      { fields: ['f', 'g'], line: 2 },
      { fields: ['h', 'i'], line: 3 },
    ]);
  });

  it('a release file of 64 MiB without a line break is read in linear time, as one problem', async () => {
    const { readRowBatches } = await import('../../../server/receita/import/rows.ts');
    const { Readable } = await import('node:stream');
    const piece = Buffer.alloc(1 << 16, 'x');
    const source = Readable.from((function* () {
      for (let i = 0; i < 1024; i++) yield piece;
      yield Buffer.from('\n"1";"2"\n');
    })());
    const problems: unknown[] = [];
    const rows = [];
    const started = performance.now();
    for await (const batch of readRowBatches(source, { name: 'K3241.K03200Y0.D51213.EMPRECSV' }, 2, (p) => problems.push(p))) rows.push(...batch);
    // Quadratic, this took minutes; linear, well under a second on a loaded machine (the bound only catches the quadratic).
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(problems).toEqual([{ file: 'K3241.K03200Y0.D51213.EMPRECSV', line: 1, message: expect.stringMatching(/^a line longer than 1,048,576 characters/) }]);
    expect(rows.map((r) => ({ fields: r.fields, line: r.line }))).toEqual([{ fields: ['1', '2'], line: 2 }]);
  });
});
