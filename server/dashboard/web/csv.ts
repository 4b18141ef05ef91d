/**
 * CSV as RFC 4180 writes it: fields holding a comma, a quote or a line break are quoted, quotes
 * doubled, lines ended by CRLF. Text that a spreadsheet would run as a formula (=, +, -, @ first)
 * is prefixed with an apostrophe; numbers stay numbers.
 */
export type Cell = string | number | null | undefined;

const FORMULA = /^[=+\-@\t\r]/;

export function csvField(value: Cell): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'number' ? String(value) : FORMULA.test(value) ? `'${value}` : value;
  if (/[",\r\n]/.test(text)) text = `"${text.replace(/"/g, '""')}"`;
  return text;
}

export const toCsv = (rows: Cell[][]) => rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';

/** Offers `text` as a file download (a Blob and a temporary link; nothing leaves the browser). */
export function download(filename: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
