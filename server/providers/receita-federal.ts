/** The imported Receita Federal registry as an enrichment source: free to reach, always configured. */
import { checkCnpj } from '../../shared/cnpj.ts';
import type { Companies } from '../companies/companies.ts';
import { REGISTRY_SOURCE } from '../companies/company-record.ts';
import { companyFields, REGISTRY_COMPANY_OUTPUTS } from './company-fields.ts';
import type { LocalProvider } from './data-provider.ts';

export const receitaFederal: LocalProvider<{ companies: Pick<Companies, 'byCnpj'> }> = {
  declaration: {
    id: REGISTRY_SOURCE,
    name: 'Receita Federal open data (imported)',
    kind: 'company',
    inputs: [['cnpj']],
    outputs: [...REGISTRY_COMPANY_OUTPUTS],
    // The price of a company found, as in the CNPJ batch lookup.
    cost: 1,
    quality: 10,
    limits: { maxConcurrent: 50 },
    keyVariable: null,
    baseUrl: null,
  },
  build: ({ companies }) => ({
    ...receitaFederal.declaration,
    async enrich(known) {
      const check = checkCnpj(String(known.cnpj));
      if (check.status !== 'valid') return null;
      const found = await companies.byCnpj([check.cnpj]);
      const doc = found.get(check.cnpj);
      return doc ? companyFields(doc) : null;
    },
  }),
};
