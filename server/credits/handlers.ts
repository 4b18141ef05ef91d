import type { EnrichMemory } from '../enrich/memory.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Handler } from '../invocation/handler.ts';
import type { Credits } from './ledger.ts';

/** The balance, the ledger and the usage; `memory` says what enrichment memory spared. */
export function createCreditHandlers({ credits, memory }: { credits: Credits; memory: Pick<EnrichMemory, 'savedThisMonth'> }) {
  const getCredits: Handler<'getCredits'> = async (_input, ctx) => {
    const view = await credits.view(ctx.workspaceId);
    if (!view) throw new ServiceError('not_found', 'workspace not found');
    return view;
  };

  const listLedger: Handler<'listLedger'> = async ({ limit = 50, before, operation }, ctx) => credits.page(ctx.workspaceId, { limit, before, operation });

  const getUsage: Handler<'getUsage'> = async ({ days = 30 }, ctx) => {
    const [usage, memorySaved] = await Promise.all([credits.usage(ctx.workspaceId, days), memory.savedThisMonth(ctx.workspaceId)]);
    return { days: usage, memorySaved };
  };

  return { getCredits, listLedger, getUsage };
}
