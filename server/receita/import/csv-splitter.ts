/**
 * Release text split into rows of fields, as papaparse split it (quoted fields, a doubled quote
 * inside one, line breaks inside quotes, `\n` or `\r\n` rows), but made for the Receita's files:
 * every field of theirs is quoted, so a field is found with one indexOf and one slice. Papaparse
 * and its stream plumbing took a fifth of the import's main thread, which every row crosses.
 *
 * Text comes in pieces; a row cut by the end of a piece waits for the next one. A row that grows
 * past `maxRowChars` without ending (a file with no line breaks, a quote never closed) is not
 * waited for: each piece would rescan it from its start, quadratic in its length, so it is
 * dropped up to its next line break and reported once.
 */

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const SEMICOLON = 0x3b;
/** Not a row {@link CsvSplitter.quotedRow} takes: the general splitter reads it. */
const NOT_QUOTED = -2;

export interface SplitRow {
  /** Every field; only the first few when `quoted` is set. */
  fields: string[];
  /** 1-based line where the row starts. */
  line: number;
  /**
   * A row of only quoted fields, none holding a quote or a line break, whose fields past the
   * first few were left unsplit: the text between its first and last quote, which
   * {@link quotedFields} splits. Whoever needs them splits them (a worker thread), which spares
   * the splitting thread a string per field and their trip to that worker.
   */
  quoted?: string;
  /** A quote opened in this row is never closed: its last field runs to the end of the text (papaparse's reading). */
  unclosedQuote?: true;
}

const QUOTED_DELIMITER = '";"';

/** All the fields of a row given as `quoted` text. */
export function quotedFields(quoted: string): string[] {
  return quoted.split(QUOTED_DELIMITER);
}

/** Far beyond any row of the Receita's (about a kilobyte), and small enough to rescan a few times. */
export const MAX_ROW_CHARS = 1 << 20;

export interface SplitOptions {
  /** The longest row waited for (default {@link MAX_ROW_CHARS}). */
  maxRowChars?: number;
  /** Told the line of each row dropped for being longer, once per row. */
  onOverlong?: (line: number, maxRowChars: number) => void;
  /** With `columns`: a row of that many quoted fields (the Receita's own form) is split only this far; see {@link SplitRow.quoted}. */
  splitFirst?: number;
  columns?: number;
}

export class CsvSplitter {
  private pending = '';
  /** Dropping an overlong row's text until its next line break. */
  private skipping = false;
  /** The line the next row starts on. */
  line = 1;
  private readonly delimiter: number;
  private readonly maxRowChars: number;

  constructor(
    delimiter: string,
    private readonly options: SplitOptions = {},
  ) {
    this.delimiter = delimiter.charCodeAt(0);
    this.maxRowChars = options.maxRowChars ?? MAX_ROW_CHARS;
  }

  /** The rows complete so far; `last` says no text follows, so a row without its line break is whole. */
  push(text: string, last = false): SplitRow[] {
    if (this.skipping) {
      const lineEnd = text.indexOf('\n');
      if (lineEnd < 0) return [];
      this.skipping = false;
      this.line++;
      text = text.slice(lineEnd + 1);
    }
    const s = this.pending === '' ? text : this.pending + text;
    const rows: SplitRow[] = [];
    let at = 0;
    const quoted = this.options.splitFirst !== undefined && this.delimiter === SEMICOLON;
    while (at < s.length) {
      let end = quoted ? this.quotedRow(s, at, last, rows) : NOT_QUOTED;
      if (end === NOT_QUOTED) end = this.row(s, at, last, rows);
      if (end < 0) break;
      at = end;
    }
    this.pending = at < s.length ? s.slice(at) : '';
    if (this.pending.length > this.maxRowChars) this.dropOverlong(rows, last);
    return rows;
  }

  /** The pending row is too long to wait for: reported, and dropped up to its first line break. */
  private dropOverlong(rows: SplitRow[], last: boolean): void {
    this.options.onOverlong?.(this.line, this.maxRowChars);
    const lineEnd = this.pending.indexOf('\n');
    const rest = lineEnd < 0 ? '' : this.pending.slice(lineEnd + 1);
    this.pending = '';
    if (lineEnd < 0) {
      this.skipping = !last;
      return;
    }
    this.line++;
    // What followed its first line break is read as rows again (at least a line less each time).
    rows.push(...this.push(rest, last));
  }

  /**
   * The row starting at `start`, when it is a row of `columns` quoted fields none of which holds
   * a quote or a line break: its first fields split, the rest kept as text. Where the next row
   * starts; -1 when the text cuts it; NOT_QUOTED for any other row.
   */
  private quotedRow(s: string, start: number, last: boolean, rows: SplitRow[]): number {
    const { splitFirst = 0, columns = 0 } = this.options;
    let lineEnd = s.indexOf('\n', start);
    if (lineEnd < 0) {
      if (!last) return -1;
      lineEnd = s.length;
    }
    const fields: string[] = [];
    let count = 0;
    let i = start;
    for (;;) {
      if (s.charCodeAt(i) !== QUOTE) return NOT_QUOTED;
      const close = s.indexOf('"', i + 1);
      if (close < 0 || close >= lineEnd) return NOT_QUOTED;
      if (count < splitFirst) fields.push(s.slice(i + 1, close));
      count++;
      const next = close + 1;
      if (next === lineEnd || (next + 1 === lineEnd && s.charCodeAt(next) === CR)) {
        if (count !== columns) return NOT_QUOTED;
        rows.push({ fields, line: this.line, quoted: s.slice(start + 1, close) });
        if (lineEnd < s.length) this.line++;
        return lineEnd < s.length ? lineEnd + 1 : lineEnd;
      }
      if (s.charCodeAt(next) !== SEMICOLON) return NOT_QUOTED;
      i = next + 1;
    }
  }

  /** Splits the row starting at `start` into `rows`; where the next row starts, or -1 when the text cuts it. */
  private row(s: string, start: number, last: boolean, rows: SplitRow[]): number {
    const delimiter = this.delimiter;
    const length = s.length;
    const fields: string[] = [];
    let breaks = 0;
    let unclosed = false;
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
            unclosed = true;
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
    rows.push(unclosed ? { fields, line: this.line, unclosedQuote: true } : { fields, line: this.line });
    this.line += breaks;
    return i;
  }
}

function countBreaks(value: string): number {
  let count = 0;
  for (let at = value.indexOf('\n'); at >= 0; at = value.indexOf('\n', at + 1)) count++;
  return count;
}
