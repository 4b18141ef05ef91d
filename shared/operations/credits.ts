import { Credits } from '../schemas/credits.ts';
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
    rateClass: 'standard',
    request: {},
    responses: { 200: Credits },
    errors: [401],
  },
});
