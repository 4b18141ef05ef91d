/** Cascade enrichment of one record (`POST /api/enrich`). */
import { ENRICH_IDENTIFIERS } from '../../shared/schemas/enrichment.ts';
import { ServiceError } from '../errors.ts';
import type { Handler } from '../pipeline/handler.ts';
import type { FieldValues, FoundFields } from '../providers/fields.ts';
import { allFailed, cleanKnown, enrichRecord } from './enrich-record.ts';

/**
 * Charges the providers that returned data, once, even when the client has gone by then: their
 * data was paid for. A provider failure is an outcome in `providers`; only when every provider
 * reached failed is the answer 503.
 */
export const enrich: Handler<'enrich'> = async (input, ctx) => {
  const known: FieldValues = {};
  for (const field of ENRICH_IDENTIFIERS) if (input[field] !== undefined) known[field] = input[field];
  const budget = await ctx.budget(input.maxCredits);
  const request = {
    known: cleanKnown(known),
    ...(input.goalFields ? { goalFields: input.goalFields } : {}),
    ...(input.providerOrder ? { providerOrder: input.providerOrder } : {}),
    onlyListed: input.onlyListed ?? false,
    budget: budget.credits,
  };
  const result = await enrichRecord(request, await ctx.services.providers.forWorkspace(ctx.workspaceId), ctx);
  // Nothing could be tried because the budget could not pay for the providers that could answer.
  if (result.cost === 0 && result.attempts.some((a) => a.error === 'over the credit budget')) {
    budget.requireBalanceFor(1, 'the providers that could answer');
  }
  const charged = result.attempts.filter((a) => a.cost > 0);
  const creditsCharged = await ctx.charge(result.cost, charged.map((a) => `${a.provider} ${a.cost}`).join(', ') || 'nothing found');

  if (allFailed(result.attempts)) {
    const why = result.attempts.map((a) => a.error).filter(Boolean).join('; ');
    throw new ServiceError('provider_unavailable', `Every provider failed: ${why}`);
  }
  const goals = input.goalFields && input.goalFields.length > 0 ? input.goalFields : null;
  return {
    // What was sent is the body's identifiers (strings, the CNPJ normalized) and what was found is
    // typed by the providers' ProviderFields, so every value is the contract's.
    record: result.record as FoundFields,
    sources: result.sources,
    providers: result.attempts,
    creditsCharged,
    ...(goals ? { missing: goals.filter((f) => result.record[f] === undefined) } : {}),
  };
};
