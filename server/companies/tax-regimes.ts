/**
 * The yearly tax-regime files (regime tributário: Lucro Real, Lucro Presumido, Lucro Arbitrado,
 * Imunes e Isentas), kept in a collection of their own, one document per row, and joined with
 * each company when it is read. A row whose CNPJ has no establishment is kept all the same: the
 * join finds it once an establishment with that CNPJ arrives.
 *
 * Their layout differs from the main files: comma-separated with a header,
 * `ano,cnpj,cnpj_da_scp,forma_de_tributacao,quantidade_de_escrituracoes`, the CNPJ masked
 * (`00.000.000/0001-91`), `cnpj_da_scp` `0` when the row is not about an SCP.
 */
import { checkCnpj, normalizeCnpj } from '../../shared/cnpj.ts';
import { foldText } from '../../shared/fold-text.ts';
import { TAX_REGIME_WORDS, TAX_REGIMES, type TaxRegimeKey } from '../../shared/registry-codes.ts';
import type { TaxRegime } from '../../shared/types.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

export const TAX_REGIME_COLUMNS = 5;

export interface TaxRegimeDoc extends TaxRegime {
  /** CNPJ, year, SCP and form: a CNPJ may be in two files for one year (`LUCRO REAL` and `LUCRO ARBITRADO`). */
  _id: string;
  cnpj: string;
  release: string;
  /** The import that wrote it: a complete import removes what it did not write. */
  importRun: string;
}

export const taxRegimeIndexes: IndexDeclaration[] = [{ collection: 'tax_regimes', keys: { cnpj: 1 } }];

/** The regimes a form of taxation stands for: `LUCRO REAL/ARBITRADO` is both. */
export function regimesOf(form: string): TaxRegimeKey[] {
  const words = new Set(foldText(form).split(' '));
  return TAX_REGIMES.filter((regime) => words.has(TAX_REGIME_WORDS[regime]));
}

/** The search keys of one row: each regime alone (any year) and with its year. */
export function regimeKeys(form: string, year: number): string[] {
  return regimesOf(form).flatMap((regime) => [regime, `${regime}:${year}`]);
}

export type ParsedRow = { ok: true; doc: Omit<TaxRegimeDoc, 'release' | 'importRun'> } | { ok: false; message: string };

/** One data row (the header is the caller's to skip). */
export function taxRegimeRow(fields: string[]): ParsedRow {
  const [yearText = '', cnpjText = '', scpText = '', formText = '', entriesText = ''] = fields.map((f) => f.trim());
  const year = Number(yearText);
  if (!/^\d{4}$/.test(yearText) || year < 1900 || year > 2100) return { ok: false, message: `ano ${JSON.stringify(yearText)} is not a year` };
  const check = checkCnpj(cnpjText);
  if (check.status !== 'valid') {
    const reason = check.status === 'invalid' ? 'wrong check digits' : 'not a CNPJ';
    return { ok: false, message: `cnpj ${JSON.stringify(cnpjText)}: ${reason}` };
  }
  const cnpj = check.cnpj;
  const form = formText.replace(/\s{2,}/g, ' ');
  if (form === '') return { ok: false, message: 'forma_de_tributacao is empty' };
  const scpCnpj = scpText === '' || /^0+$/.test(scpText) ? null : (normalizeCnpj(scpText) ?? scpText);
  const entries = /^\d+$/.test(entriesText) ? Number(entriesText) : null;
  return {
    ok: true,
    doc: {
      _id: `${cnpj}:${year}:${scpCnpj ?? '0'}:${foldText(form).replaceAll(' ', '_')}`,
      cnpj,
      year,
      form,
      scpCnpj,
      bookkeepingEntries: entries,
    },
  };
}

const PUBLIC_FIELDS = { _id: 0, year: 1, form: 1, scpCnpj: 1, bookkeepingEntries: 1, cnpj: 1 } as const;

export class TaxRegimes {
  readonly collection: Collection<TaxRegimeDoc>;

  constructor(store: Store) {
    this.collection = store.collection<TaxRegimeDoc>('tax_regimes');
  }

  /** Each CNPJ's regimes, newest year first. */
  async byCnpj(cnpjs: string[]): Promise<Map<string, TaxRegime[]>> {
    const found = new Map<string, TaxRegime[]>();
    if (cnpjs.length === 0) return found;
    const docs = await this.collection.find({ cnpj: { $in: cnpjs } }, { projection: PUBLIC_FIELDS }).toArray();
    for (const doc of docs) {
      const list = found.get(doc.cnpj) ?? [];
      list.push({ year: doc.year, form: doc.form, scpCnpj: doc.scpCnpj ?? null, bookkeepingEntries: doc.bookkeepingEntries ?? null });
      found.set(doc.cnpj, list);
    }
    for (const list of found.values()) list.sort((a, b) => b.year - a.year || a.form.localeCompare(b.form));
    return found;
  }
}
