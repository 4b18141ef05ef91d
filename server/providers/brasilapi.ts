/**
 * BrasilAPI's CNPJ lookup as an enrichment source. The client (brasilapi-client.ts)
 * is shared with the CNPJ batch and keeps its own limiter: one budget for both uses.
 */
import { BRASILAPI_LIMITS, type BrasilApiSource } from './brasilapi-client.ts';
import { checkCnpj } from '../../shared/cnpj.ts';
import { companyFields, REGISTRY_COMPANY_OUTPUTS } from './company-fields.ts';
import { ProviderFailure } from './provider-failure.ts';
import type { LocalProvider } from './data-provider.ts';
import { ServiceError } from '../lib/errors.ts';

export const brasilApi: LocalProvider<{ remoteCompanies: BrasilApiSource | null }> = {
  declaration: {
    id: 'brasilapi',
    name: 'BrasilAPI',
    kind: 'company',
    inputs: [['cnpj']],
    outputs: [...REGISTRY_COMPANY_OUTPUTS],
    cost: 1,
    quality: 5,
    limits: BRASILAPI_LIMITS,
    keyVariable: null,
    switchVariable: 'BRASILAPI_ENABLED',
    // Its client is the batch lookup's (BRASILAPI_URL), not one made from this declaration.
    baseUrl: null,
  },
  build: ({ remoteCompanies: remote }) => ({
    ...brasilApi.declaration,
    async enrich(known, { signal, trace }) {
      if (!remote) throw new ProviderFailure('BrasilAPI is not enabled', true);
      const check = checkCnpj(String(known.cnpj));
      if (check.status !== 'valid') return null;
      try {
        const found = await remote.lookup(check.cnpj, signal, trace);
        return found ? companyFields(found) : null;
      } catch (err) {
        if (err instanceof ServiceError) throw new ProviderFailure(err.message);
        throw err;
      }
    },
  }),
};
