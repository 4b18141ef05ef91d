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

/**
 * Offers CSV `text` as a file download (a Blob and a temporary link; nothing leaves the browser),
 * with a byte-order mark: without it Excel reads UTF-8 as Windows-1252 and "Clínica" as "ClÃ­nica".
 */
export function download(filename: string, text: string): void {
  const url = URL.createObjectURL(new Blob(['\uFEFF', text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
