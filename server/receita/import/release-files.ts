/**
 * Finding the files of a release in a folder: the published zips (`Empresas0.zip` …) or the
 * CSVs extracted from them, whose legacy mainframe names (`K3241.K03200Y0.D61011.EMPRECSV`) only
 * say what they hold in their suffix. Files are named by kind and part so checkpoints and
 * problem reports point at something a person can find.
 */
import type { Stats } from 'node:fs';
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
  | 'estabelecimentos'
  /** The yearly tax-regime files (Lucro Real, Presumido, Arbitrado, Imunes e Isentas), published apart. */
  | 'regimes';

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

/** `Lucro Real.zip`, `Imunes e Isentas.zip`, or the CSVs inside (`Lucro Presumido 2018.csv`); `_` and `-` for spaces too. */
const TAX_REGIME_NAME = /^(lucro[ _-](real|presumido|arbitrado)|imunes[ _-]e[ _-]isentas)([ _-]?\d{4})?\.(zip|csv)$/i;

/** A folder of the release holding the tax-regime files, as the Receita publishes them apart. */
const TAX_REGIME_FOLDER = /^regimes?[ _-]tributarios?$/i;

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
  [TAX_REGIME_NAME, 'regimes'],
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
  [TAX_REGIME_NAME, 'regimes'],
];

/** What a file holds, from its name alone; undefined for anything else in the folder. */
export function kindOf(name: string): FileKind | undefined {
  const table = /\.zip$/i.test(name) ? ZIP_NAMES : CSV_SUFFIXES;
  return table.find(([pattern]) => pattern.test(name))?.[1];
}

/**
 * What was asked cannot be imported as it stands, and the person must act (another folder,
 * `--release`, `--force`): said in one line, never as a crash.
 */
export class ReleaseRefused extends Error {}

/**
 * `stat` of a release entry, with what makes it unreadable said in one line: a symlink to nothing,
 * or a loop of symlinks, is the operator's to fix, not a fault of ours (no stack).
 */
async function statEntry(full: string): Promise<Stats> {
  try {
    return await stat(full);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ReleaseRefused(`${full} is a symbolic link to nothing: fix or remove it`);
    if (code === 'ELOOP') throw new ReleaseRefused(`${full} is a loop of symbolic links: fix or remove it`);
    if (code === 'EACCES' || code === 'EPERM') throw new ReleaseRefused(`${full} cannot be read (permission denied)`);
    throw err;
  }
}

/** The release files in `dir` (and in a `regime_tributario` folder in it), in name order; throws when there is no release there at all. */
export async function findReleaseFiles(dir: string): Promise<ReleaseFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).sort();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ReleaseRefused(`${dir} is not a folder`);
    if (code === 'ELOOP') throw new ReleaseRefused(`${dir} is a loop of symbolic links`);
    if (code === 'EACCES' || code === 'EPERM') throw new ReleaseRefused(`${dir} cannot be read (permission denied)`);
    throw err;
  }
  const files: ReleaseFile[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    const kind = kindOf(name);
    if (!kind) {
      if (TAX_REGIME_FOLDER.test(name) && (await statEntry(full)).isDirectory()) {
        for (const inner of (await readdir(full)).sort()) {
          if (kindOf(inner) !== 'regimes') continue;
          const info = await statEntry(path.join(full, inner));
          if (info.isFile()) {
            files.push({ kind: 'regimes', name: `${name}/${inner}`, path: path.join(full, inner), zipped: /\.zip$/i.test(inner), size: info.size });
          }
        }
      }
      continue;
    }
    const info = await statEntry(full);
    if (info.isFile()) files.push({ kind, name, path: full, zipped: /\.zip$/i.test(name), size: info.size });
  }
  if (!files.some((f) => f.kind === 'estabelecimentos')) {
    throw new ReleaseRefused(`${dir} holds no Estabelecimentos file (Estabelecimentos*.zip or *.ESTABELE): not a CNPJ release`);
  }
  return files;
}

/** The per-company files every release has, and the names the Receita publishes them under. */
const COMPANY_FILES: Array<[FileKind, string]> = [['empresas', 'Empresas'], ['estabelecimentos', 'Estabelecimentos'], ['socios', 'Socios'], ['simples', 'Simples']];

/** A file's part: `Socios3.zip`, or the `Y3` of its extracted `K3241.K03200Y3.D61011.SOCIOCSV`. */
const partOf = (file: ReleaseFile): number | undefined => {
  const match = file.zipped ? /(\d+)\.zip$/i.exec(file.name) : /Y(\d)\.D\d{5}\./i.exec(file.name);
  return match ? Number(match[1]) : undefined;
};

/**
 * The files a release should have and `files` lack, as the Receita names them: a per-company
 * file absent altogether (`Socios*.zip`), or a part below the last one there (`Estabelecimentos3.zip`
 * beside `Estabelecimentos4.zip`). The parts after the last one there cannot be told from a
 * smaller release.
 */
export function missingFiles(files: ReleaseFile[]): string[] {
  const missing: string[] = [];
  for (const [kind, published] of COMPANY_FILES) {
    const parts = new Set(files.filter((f) => f.kind === kind).map(partOf));
    if (parts.size === 0) missing.push(kind === 'simples' ? `${published}.zip` : `${published}*.zip`);
    const numbered = [...parts].filter((part) => part !== undefined);
    for (let part = 0; part < Math.max(0, ...numbered); part++) if (!parts.has(part)) missing.push(`${published}${part}.zip`);
  }
  return missing;
}

/** Where the release month was read, said back to the user. */
export interface ReleaseMonth {
  release: string;
  /** e.g. `the folder name "cnpj_2026-10"`, `the extraction date D61011 in K3241.K03200Y0.D61011.EMPRECSV`. */
  readFrom: string;
}

/** `2026-10`, `2026_10`, `202610` in a name, not inside a longer number. */
const MONTH_IN_NAME = /(?<!\d)(20\d{2})[-_.]?(0[1-9]|1[0-2])(?!\d)/;

/**
 * The release's `YYYY-MM`: the folder's name when it is one (the Receita publishes each month in
 * such a folder) or holds one (`cnpj-2026-10`, `dados_202610`), else a month in a file's name,
 * else the extraction date the inner file names carry (`D61011`: year ending in 6, October 11th),
 * taken as the latest such year not in the future. Says where it read it.
 */
export function releaseMonthOf(dir: string, innerNames: string[], fileNames: string[] = [], now = new Date()): ReleaseMonth | undefined {
  const folder = path.basename(path.resolve(dir));
  const exact = folder.match(/^(\d{4})-(\d{2})$/);
  if (exact) return { release: `${exact[1]}-${exact[2]}`, readFrom: `the folder name "${folder}"` };
  const inFolder = folder.match(MONTH_IN_NAME);
  if (inFolder) return { release: `${inFolder[1]}-${inFolder[2]}`, readFrom: `the folder name "${folder}"` };
  for (const name of fileNames) {
    const inName = name.match(MONTH_IN_NAME);
    if (inName) return { release: `${inName[1]}-${inName[2]}`, readFrom: `the file name "${name}"` };
  }
  for (const name of innerNames) {
    const code = name.match(/\.D(\d)(\d{2})(\d{2})\b/);
    if (!code) continue;
    const month = Number(code[2]);
    if (month < 1 || month > 12) continue;
    let year = now.getUTCFullYear() - ((now.getUTCFullYear() - Number(code[1]) + 10) % 10);
    if (year === now.getUTCFullYear() && month > now.getUTCMonth() + 1) year -= 10;
    return {
      release: `${year}-${code[2]}`,
      readFrom: `the extraction date D${code[1]}${code[2]}${code[3]} in the file name "${name}" (${year}-${code[2]}-${code[3]})`,
    };
  }
  return undefined;
}

/** {@link releaseMonthOf}'s month alone. */
export function releaseOf(dir: string, innerNames: string[], now = new Date()): string | undefined {
  return releaseMonthOf(dir, innerNames, [], now)?.release;
}
