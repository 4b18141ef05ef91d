/**
 * Finding the files of a release in a folder: the published zips (`Empresas0.zip` …) or the
 * CSVs extracted from them, whose legacy mainframe names (`K3241.K03200Y0.D61011.EMPRECSV`) only
 * say what they hold in their suffix. Files are named by kind and part so checkpoints and
 * problem reports point at something a person can find.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

export type FileKind =
  | 'cnaes'
  | 'motivos'
  | 'municipios'
  | 'naturezas'
  | 'paises'
  | 'qualificacoes'
  | 'empresas'
  | 'simples'
  | 'socios'
  | 'estabelecimentos';

export const LOOKUP_KINDS = ['cnaes', 'motivos', 'municipios', 'naturezas', 'paises', 'qualificacoes'] as const;
export type LookupKind = (typeof LOOKUP_KINDS)[number];

export interface ReleaseFile {
  kind: FileKind;
  /** The file name in the folder: what reports and checkpoints name. */
  name: string;
  path: string;
  zipped: boolean;
  /** Bytes on disk, for the progress estimate. */
  size: number;
}

const ZIP_NAMES: Array<[RegExp, FileKind]> = [
  [/^empresas\d*\.zip$/i, 'empresas'],
  [/^estabelecimentos\d*\.zip$/i, 'estabelecimentos'],
  [/^socios\d*\.zip$/i, 'socios'],
  [/^simples\.zip$/i, 'simples'],
  [/^cnaes\.zip$/i, 'cnaes'],
  [/^motivos\.zip$/i, 'motivos'],
  [/^municipios\.zip$/i, 'municipios'],
  [/^naturezas\.zip$/i, 'naturezas'],
  [/^paises\.zip$/i, 'paises'],
  [/^qualificacoes\.zip$/i, 'qualificacoes'],
];

const CSV_SUFFIXES: Array<[RegExp, FileKind]> = [
  [/EMPRECSV$/i, 'empresas'],
  [/ESTABELE$/i, 'estabelecimentos'],
  [/SOCIOCSV$/i, 'socios'],
  [/SIMPLES\.CSV/i, 'simples'],
  [/CNAECSV$/i, 'cnaes'],
  [/MOTICSV$/i, 'motivos'],
  [/MUNICCSV$/i, 'municipios'],
  [/NATJUCSV$/i, 'naturezas'],
  [/PAISCSV$/i, 'paises'],
  [/QUALSCSV$/i, 'qualificacoes'],
];

/** What a file holds, from its name alone; undefined for anything else in the folder. */
export function kindOf(name: string): FileKind | undefined {
  const table = /\.zip$/i.test(name) ? ZIP_NAMES : CSV_SUFFIXES;
  return table.find(([pattern]) => pattern.test(name))?.[1];
}

/** The release files in `dir`, in name order; throws when there is no release there at all. */
export async function findReleaseFiles(dir: string): Promise<ReleaseFile[]> {
  const names = (await readdir(dir)).sort();
  const files: ReleaseFile[] = [];
  for (const name of names) {
    const kind = kindOf(name);
    if (!kind) continue;
    const full = path.join(dir, name);
    const info = await stat(full);
    if (info.isFile()) files.push({ kind, name, path: full, zipped: /\.zip$/i.test(name), size: info.size });
  }
  if (!files.some((f) => f.kind === 'estabelecimentos')) {
    throw new Error(`${dir} holds no Estabelecimentos file (Estabelecimentos*.zip or *.ESTABELE): not a CNPJ release`);
  }
  return files;
}

/**
 * The release's `YYYY-MM`: the folder's name when it is one (the Receita publishes each month in
 * such a folder), else the extraction date the inner file names carry (`D61011`: year ending in
 * 6, October 11th), taken as the latest such year not in the future.
 */
export function releaseOf(dir: string, innerNames: string[], now = new Date()): string | undefined {
  const folder = path.basename(path.resolve(dir)).match(/^(\d{4})-(\d{2})$/);
  if (folder) return `${folder[1]}-${folder[2]}`;
  for (const name of innerNames) {
    const code = name.match(/\.D(\d)(\d{2})(\d{2})\b/);
    if (!code) continue;
    const month = Number(code[2]);
    if (month < 1 || month > 12) continue;
    let year = now.getUTCFullYear() - ((now.getUTCFullYear() - Number(code[1]) + 10) % 10);
    if (year === now.getUTCFullYear() && month > now.getUTCMonth() + 1) year -= 10;
    return `${year}-${code[2]}`;
  }
  return undefined;
}
