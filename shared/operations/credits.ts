import { Credits, LedgerPage, LedgerQuery, Usage, UsageQuery } from '../schemas/credits.ts';
import { defineOperations } from './types.ts';

export const creditsOperations = defineOperations({
  getCredits: {
    method: 'GET',
    path: '/api/credits',
    summary: 'Credit balance and movements',
    description:
      'Balance, total consumption, plan and the 50 most recent ledger movements. Answers without a plan too.',
    tag: 'Credits',
    scope: 'credits:read',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: {},
    responses: { 200: Credits },
    errors: [401],
  },
  listLedger: {
    method: 'GET',
    path: '/api/credits/ledger',
    summary: 'Ledger, page by page',
    description: 'Every movement of the workspace, newest first, optionally those of one operation. Answers without a plan too.',
    tag: 'Credits',
    scope: 'credits:read',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { query: LedgerQuery },
    responses: { 200: LedgerPage },
    errors: [400, 401],
    extension: true,
  },
  getUsage: {
    method: 'GET',
    path: '/api/credits/usage',
    summary: 'Consumption per day',
    description: 'Credits spent per UTC day over the last days (30 by default), net of refunds. Answers without a plan too.',
    tag: 'Credits',
    scope: 'credits:read',
    requiresPlan: false,
    credits: { rule: 'free' },
    request: { query: UsageQuery },
    responses: { 200: Usage },
    errors: [400, 401],
    extension: true,
  },
});
