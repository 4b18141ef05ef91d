import { AiColumnBody, AiColumnResult, ResearchBody, ResearchResult } from '../schemas/ai.ts';
import { defineOperations } from './types.ts';

const aiErrors = [400, 401, 402, 429, 500, 502, 503];

export const aiOperations = defineOperations({
  research: {
    method: 'POST',
    path: '/api/research',
    summary: 'Research a record',
    description:
      'Answers a prompt about a record from the row, and with `webSearch` from the web pages a search finds, with citations. ' +
      'Costs 2 credits, 5 with `webSearch`.',
    tag: 'AI',
    scope: 'research:write',
    requiresPlan: true,
    credits: { rule: 'fixed', cost: 2, costWith: { field: 'webSearch', cost: 5 } },
    request: { body: ResearchBody },
    responses: { 200: ResearchResult },
    errors: aiErrors,
  },
  aiColumn: {
    method: 'POST',
    path: '/api/ai-column',
    summary: 'Generate a column value',
    description: 'A short value generated from an instruction and the row context. Costs 1 credit.',
    tag: 'AI',
    scope: 'research:write',
    requiresPlan: true,
    credits: { rule: 'fixed', cost: 1 },
    request: { body: AiColumnBody },
    responses: { 200: AiColumnResult },
    errors: aiErrors,
  },
});
