/**
 * Companies of Brazil's public registry: one document per establishment, keyed by its CNPJ,
 * written by the Receita Federal importer and read by the batch lookup and the search.
 */
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

export const REGISTRY_SOURCE = 'receita_federal';

export interface CodeAndDescription {
  code: string;
  description: string | null;
}

export interface CompanyDoc {
  /** The CNPJ, 14 characters, no punctuation. */
  _id: string;
  cnpj: string;
  /** The first 8 characters, shared by a company's head office and branches. */
  root: string;
  name: string;
  tradeName: string | null;
  establishment: 'MATRIZ' | 'FILIAL';
  registrationStatus: 'ATIVA' | 'BAIXADA' | 'INAPTA' | 'NULA' | 'SUSPENSA' | null;
  registrationStatusDate: string | null;
  openingDate: string | null;
  mainActivity: CodeAndDescription | null;
  secondaryActivities: CodeAndDescription[];
  legalNature: CodeAndDescription | null;
  capital: number | null;
  fiscalSize: '00' | '01' | '03' | '05' | null;
  simplesOption: boolean | null;
  meiOption: boolean | null;
  address: {
    street: string | null;
    number: string | null;
    complement: string | null;
    district: string | null;
    zipCode: string | null;
    city: string | null;
    state: string | null;
  };
  phones: string[];
  email: string | null;
  partners: Array<{ name: string; document: string | null; qualification: string | null; since: string | null }>;
  /** The open-data release it was imported from, `YYYY-MM`. */
  release: string;
}

export const companyIndexes: IndexDeclaration[] = [{ collection: 'companies', keys: { root: 1 } }];

/** A company as the API returns it: its registry data, the CNPJ and where it came from. */
export function companyView(doc: CompanyDoc): Omit<CompanyDoc, '_id'> & { source: string } {
  const { _id, ...data } = doc;
  return { ...data, source: REGISTRY_SOURCE };
}

export class Companies {
  readonly collection: Collection<CompanyDoc>;

  constructor(store: Store) {
    this.collection = store.collection<CompanyDoc>('companies');
  }

  /** The companies found among `cnpjs`, keyed by CNPJ. */
  async byCnpj(cnpjs: string[]): Promise<Map<string, CompanyDoc>> {
    if (cnpjs.length === 0) return new Map();
    const docs = await this.collection.find({ _id: { $in: cnpjs } }).toArray();
    return new Map(docs.map((d) => [d._id, d]));
  }
}
