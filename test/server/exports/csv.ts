/** A strict RFC 4180 reader for the tests (CRLF rows, quoted cells with doubled quotes): not the server's writer, so it checks it. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' && cell === '') {
      i++;
      for (;;) {
        const end = text.indexOf('"', i);
        if (end < 0) throw new Error('unterminated quoted cell');
        cell += text.slice(i, end);
        i = end + 1;
        if (text[i] === '"') {
          cell += '"';
          i++;
        } else break;
      }
      continue;
    }
    if (c === ',') {
      row.push(cell);
      cell = '';
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i += 2;
    } else {
      cell += c;
      i++;
    }
  }
  if (cell !== '' || row.length > 0) throw new Error('the last row has no CRLF');
  return rows;
}
