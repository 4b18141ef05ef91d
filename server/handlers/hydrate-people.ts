import type { Attempt } from '../enrich/cascade.ts';
import { allFailed, cleanKnown, enrichRecord, spendable } from '../enrich/enrich-record.ts';
import { ApiError } from '../http/errors.ts';
import { isField, present, type FieldValues } from '../providers/fields.ts';
import type { Handler } from './types.ts';

/** Names a search row or a sheet may use for the cascade's fields. */
const ALIASES: Record<string, string> = {
  name: 'fullName',
  company: 'companyName',
  domain: 'companyDomain',
  website: 'companyDomain',
  linkedin: 'linkedinUrl',
  jobTitle: 'title',
};

function knownOf(lead: Record<string, unknown>): FieldValues {
  const known: FieldValues = {};
  for (const [key, value] of Object.entries(lead)) {
    const field = ALIASES[key] ?? key;
    if (isField(field) && (typeof value === 'string' || typeof value === 'number') && known[field] === undefined) {
      known[field] = typeof value === 'string' ? value.trim() : value;
    }
  }
  return present(known);
}

type Settled = Record<string, unknown> & { enriched: boolean };

/**
 * Up to 25 leads through the cascade at once. A lead counts as enriched, and is charged (the
 * registry's price per lead), when the cascade added at least one field. With `maxCredits` (or a
 * low balance) no more leads are started than could still be paid for: a lead that comes back
 * with nothing frees its place.
 */
export const hydratePeople: Handler<'hydratePeople'> = async ({ leads, maxCredits }, ctx) => {
  const knowns = leads.map((lead, i) => cleanKnown(knownOf(lead), `leads[${i}].cnpj`));
  const slots = await ctx.services.providers.forWorkspace(ctx.workspaceId);
  const perLead = ctx.price(1);
  const credits = await spendable(ctx, maxCredits);
  // The balance, not the caller's own cap, cannot pay for one lead.
  const capped = maxCredits !== undefined && maxCredits < perLead;
  if (credits < perLead && leads.length > 0 && !capped) {
    throw new ApiError(402, 'insufficient_credits', `The balance is ${credits} credits; a lead enriched costs ${perLead}`);
  }
  /** Leads that may still be started: the ones the budget could pay for. */
  let budget = perLead > 0 ? Math.floor(credits / perLead) : leads.length;
  const results: Settled[] = leads.map((lead) => ({ ...lead, enriched: false }));

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < leads.length && budget > 0 && !ctx.signal.aborted) {
      const i = next++;
      budget--; // this lead's price, given back if it comes back with nothing
      const known = knowns[i]!;
      const result = await enrichRecord({ known, budget: Infinity }, slots, ctx);
      const added = Object.keys(result.record).filter((f) => result.sources[f as keyof typeof result.sources] !== 'input');
      if (added.length === 0) budget++;
      results[i] = {
        ...leads[i],
        ...result.record,
        enriched: added.length > 0,
        sources: result.sources,
        providers: result.attempts,
      };
    }
  };
  // One worker per lead: the schema caps a request at 25.
  await Promise.all(Array.from({ length: leads.length }, worker));

  const enriched = results.filter((r) => r.enriched).length;
  const skipped = results.filter((r) => !('providers' in r)).length;
  const attempts = results.map((r) => r.providers as Attempt[] | undefined);
  if (leads.length > 0 && attempts.every((a) => a !== undefined && allFailed(a))) {
    throw new ApiError(503, 'provider_unavailable', 'Every provider failed for every lead');
  }
  const charged = await ctx.charge(enriched, `${enriched} of ${leads.length} leads enriched`);
  return { results, enriched, creditsCharged: charged, ...(skipped ? { notProcessed: skipped } : {}) };
};
