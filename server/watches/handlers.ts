/**
 * Watches: create, list, get, resume and delete a workspace's watches on registry changes (free);
 * what they receive is sent by dispatcher.ts. Another workspace's watch is not found.
 */
import type { ChangeKind } from '../../shared/schemas/changes.ts';
import { validCnpjs } from '../companies/changes/cnpj-list.ts';
import type { Companies } from '../companies/companies.ts';
import { planSearch, type CompanyFilters } from '../companies/search-plan.ts';
import { checkAll, notFound } from '../lib/errors.ts';
import { checkWebhookUrl } from '../jobs/webhook-url.ts';
import type { Handler } from '../invocation/handler.ts';
import type { Credits } from '../credits/ledger.ts';
import type { Webhooks } from '../jobs/webhooks.ts';
import { withdrawDeliveries } from './dispatcher.ts';
import { watchView, type Watches } from './watches.ts';

export interface WatchDeps {
  watches: Watches;
  companies: Pick<Companies, 'activities'>;
  /** Wakes the runner whose passes send deliveries, so a resumed watch sends what it missed now. */
  runner: { wake(): void };
  /** A deleted watch's deliveries not yet sent are dropped, their changes refunded. */
  webhooks: Pick<Webhooks, 'drop'>;
  credits: Pick<Credits, 'refund'>;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may go to private addresses. */
  webhookAllowPrivate: boolean;
}

export function createWatchHandlers({ watches, companies, runner, webhooks, credits, webhookAllowPrivate }: WatchDeps) {
  const createWatch: Handler<'createWatch'> = async (input, ctx) => {
    const { name, cnpjs, filters, kinds, webhook } = input;
    const [watched, , url] = await checkAll(
      () => (cnpjs ? validCnpjs(cnpjs) : undefined),
      // Refused now, as the search refuses them, rather than at the first delivery.
      async () => void (filters && planSearch(filters as CompanyFilters, await companies.activities())),
      async () => (await checkWebhookUrl(webhook.url, webhookAllowPrivate)).toString(),
    );
    const doc = await watches.create(ctx.workspaceId, {
      // Stored trimmed, as every name (the schema has refused a blank one).
      name: name.trim(),
      ...(watched ? { cnpjs: watched } : {}),
      ...(filters ? { filters } : {}),
      ...(kinds ? { kinds: kinds as ChangeKind[] } : {}),
      webhook: { url, secret: webhook.secret },
    });
    return watchView(doc);
  };

  const listWatches: Handler<'listWatches'> = async (_input, ctx) => ({ watches: (await watches.list(ctx.workspaceId)).map(watchView) });

  const getWatch: Handler<'getWatch'> = async ({ watchId }, ctx) => {
    const doc = await watches.get(ctx.workspaceId, watchId);
    if (!doc) throw notFound('Watch');
    return watchView(doc);
  };

  const resumeWatch: Handler<'resumeWatch'> = async ({ watchId }, ctx) => {
    const doc = await watches.resume(ctx.workspaceId, watchId);
    if (!doc) throw notFound('Watch');
    runner.wake();
    return watchView(doc);
  };

  const deleteWatch: Handler<'deleteWatch'> = async ({ watchId }, ctx) => {
    if (!(await watches.delete(ctx.workspaceId, watchId))) throw notFound('Watch');
    await withdrawDeliveries({ webhooks, credits }, { _id: watchId, workspaceId: ctx.workspaceId });
    return { deleted: true };
  };

  return { createWatch, listWatches, getWatch, resumeWatch, deleteWatch };
}
