import { EnrichBody, EnrichResult } from '../schemas/enrichment.ts';
import { defineOperations } from './types.ts';

export const enrichmentOperations = defineOperations({
  enrich: {
    method: 'POST',
    path: '/api/enrich',
    summary: 'Enrich a record',
    description:
      'Cascade enrichment of one person or company across the data providers, from at least one identifier. ' +
      'Costs the sum of the declared costs of the providers that returned data.',
    tag: 'Enrichment',
    scope: 'enrich:write',
    requiresPlan: true,
    credits: { rule: 'provider_sum' },
    request: { body: EnrichBody },
    responses: { 200: EnrichResult },
    errors: [400, 401, 402, 429, 500],
  },
});
