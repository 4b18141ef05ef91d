/**
 * CSV text → rows, as the server writes an export (RFC 4180: a field quoted when it holds a comma,
 * a quote or a line break, quotes doubled, rows ended by CRLF). Apps Script's Utilities.parseCsv
 * would do, but the tests' sandbox would then hold a second parser of its own to fake it.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch !== '"') field += ch;
      else if (text[i + 1] === '"') (field += '"'), i++;
      else quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  // A last row without its line ending.
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}
