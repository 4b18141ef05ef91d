/** Writing small Receita Federal release files by hand: quoted, `;`-separated, latin1. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import yazl from 'yazl';
import { createWriteStream } from 'node:fs';

export const csvLine = (fields: string[]) => fields.map((f) => `"${f}"`).join(';') + '\n';

export function csv(rows: string[][]): Buffer {
  return Buffer.from(rows.map(csvLine).join(''), 'latin1');
}

export async function writeZip(file: string, innerName: string, content: Buffer): Promise<void> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(content, innerName, { mtime: new Date(Date.UTC(2026, 9, 11)) });
  zip.end();
  await new Promise<void>((resolve, reject) => {
    const out = createWriteStream(file);
    zip.outputStream.pipe(out).on('finish', resolve).on('error', reject);
  });
}

/** Extracted files with the legacy inner names, one per kind. */
export async function writeExtracted(dir: string, files: Record<string, string[][]>): Promise<void> {
  for (const [name, rows] of Object.entries(files)) await writeFile(path.join(dir, name), csv(rows));
}

/** An Estabelecimentos row (30 fields) from the fields a test cares about. */
export function estabelecimento(cnpj: string, fields: Partial<Record<number, string>> = {}): string[] {
  const row = Array.from({ length: 30 }, () => '');
  Object.assign(row, {
    0: cnpj.slice(0, 8),
    1: cnpj.slice(8, 12),
    2: cnpj.slice(12),
    3: cnpj.slice(8, 12) === '0001' ? '1' : '2',
    5: '02',
    6: '20150302',
    7: '00',
    10: '20150302',
    11: '6201501',
    19: 'SP',
    20: '7107',
    ...fields,
  });
  return row;
}
