import { Health, ProviderCatalog } from '../schemas/catalog.ts';
import { defineOperations } from './types.ts';

export const catalogOperations = defineOperations({
  getHealth: {
    method: 'GET',
    path: '/health',
    summary: 'Service health',
    description: 'Status, version and the kind of store in use. No authentication, no credits.',
    tag: 'Catalog',
    scope: null,
    requiresPlan: false,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: Health },
    errors: [],
  },
  listProviders: {
    method: 'GET',
    path: '/api/providers',
    summary: 'Provider catalog',
    description: 'Data providers, their capabilities, whether they are configured, and the enrichable fields.',
    tag: 'Catalog',
    scope: null,
    requiresPlan: false,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: ProviderCatalog },
    errors: [],
  },
});
