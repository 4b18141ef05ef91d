/**
 * Release text split into rows of fields, as papaparse split it (quoted fields, a doubled quote
 * inside one, line breaks inside quotes, `\n` or `\r\n` rows), but made for the Receita's files:
 * every field of theirs is quoted, so a field is found with one indexOf and one slice. Papaparse
 * and its stream plumbing took a fifth of the import's main thread, which every row crosses.
 *
 * Text comes in pieces; a row cut by the end of a piece waits for the next one.
 */

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

export interface SplitRow {
  fields: string[];
  /** 1-based line where the row starts. */
  line: number;
}

export class CsvSplitter {
  private pending = '';
  /** The line the next row starts on. */
  line = 1;
  private readonly delimiter: number;

  constructor(delimiter: string) {
    this.delimiter = delimiter.charCodeAt(0);
  }

  /** The rows complete so far; `last` says no text follows, so a row without its line break is whole. */
  push(text: string, last = false): SplitRow[] {
    const s = this.pending === '' ? text : this.pending + text;
    const rows: SplitRow[] = [];
    let at = 0;
    while (at < s.length) {
      const end = this.row(s, at, last, rows);
      if (end < 0) break;
      at = end;
    }
    this.pending = at < s.length ? s.slice(at) : '';
    return rows;
  }

  /** Splits the row starting at `start` into `rows`; where the next row starts, or -1 when the text cuts it. */
  private row(s: string, start: number, last: boolean, rows: SplitRow[]): number {
    const delimiter = this.delimiter;
    const length = s.length;
    const fields: string[] = [];
    let breaks = 0;
    let i = start;
    for (;;) {
      let value: string;
      if (s.charCodeAt(i) === QUOTE) {
        let from = i + 1;
        let search = from;
        value = '';
        for (;;) {
          const q = s.indexOf('"', search);
          if (q < 0) {
            if (!last) return -1;
            // An unclosed quote runs to the end of the text, as papaparse reads it.
            value += s.slice(from);
            i = length;
            break;
          }
          if (q + 1 === length && !last) return -1;
          const next = s.charCodeAt(q + 1);
          if (next === QUOTE) {
            value += s.slice(from, q + 1);
            from = search = q + 2;
            continue;
          }
          if (q + 1 === length || next === delimiter || next === LF || next === CR) {
            value += s.slice(from, q);
            i = q + 1;
            break;
          }
          // Spaces between a closing quote and the delimiter are dropped; any other quote is text.
          let after = q + 1;
          while (after < length && s.charCodeAt(after) === SPACE) after++;
          if (after === length && !last) return -1;
          const then = s.charCodeAt(after);
          if (after === length || then === delimiter || then === LF || then === CR) {
            value += s.slice(from, q);
            i = after;
            break;
          }
          search = q + 1;
        }
        if (value.indexOf('\n') >= 0) breaks += countBreaks(value);
      } else {
        let j = i;
        while (j < length) {
          const c = s.charCodeAt(j);
          if (c === delimiter || c === LF) break;
          j++;
        }
        if (j === length && !last) return -1;
        // A `\r\n` row's last field ends before the `\r`.
        value = s.slice(i, j > i && s.charCodeAt(j - 1) === CR && (j === length || s.charCodeAt(j) === LF) ? j - 1 : j);
        i = j;
      }
      fields.push(value);
      if (i >= length) break;
      const c = s.charCodeAt(i);
      if (c === delimiter) {
        i++;
        if (i === length) {
          if (!last) return -1;
          fields.push('');
          break;
        }
        continue;
      }
      if (c === CR) {
        if (i + 1 === length) {
          if (!last) return -1;
          i++;
          break;
        }
        if (s.charCodeAt(i + 1) === LF) i++;
      }
      i++; // the line break
      breaks++;
      break;
    }
    rows.push({ fields, line: this.line });
    this.line += breaks;
    return i;
  }
}

function countBreaks(value: string): number {
  let count = 0;
  for (let at = value.indexOf('\n'); at >= 0; at = value.indexOf('\n', at + 1)) count++;
  return count;
}
