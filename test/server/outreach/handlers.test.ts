/**
 * The outreach handlers built from only what they use: their four repositories on a real
 * embedded store, a message writer without a model, and the campaign size limit. No server, no
 * services bag: what the factory's signature names is all they can reach.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type InputOf, type OperationId } from '../../../shared/operations/index.ts';
import { SCOPES } from '../../../shared/operations/types.ts';
import { DailyAllowances } from '../../../server/credits/allowance.ts';
import { Credits } from '../../../server/credits/ledger.ts';
import { Payment } from '../../../server/credits/payment.ts';
import { Campaigns } from '../../../server/outreach/campaigns.ts';
import { createOutreachHandlers } from '../../../server/outreach/handlers.ts';
import { MessageWriter } from '../../../server/outreach/message-writer.ts';
import { Prospects } from '../../../server/outreach/prospects.ts';
import { Sheets } from '../../../server/outreach/sheets.ts';
import { Templates } from '../../../server/outreach/templates.ts';
import { InvocationContext } from '../../../server/pipeline/handler-context.ts';
import { openEmbeddedStore } from '../../../server/store/embedded/store.ts';
import type { Store } from '../../../server/store/port.ts';
import { Workspaces } from '../../../server/credits/workspaces.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let store: Store;
let handlers: ReturnType<typeof createOutreachHandlers>;
let payment: Payment;

beforeAll(async () => {
  store = await openEmbeddedStore(await tempDir('outreach-handlers'));
  handlers = createOutreachHandlers({
    templates: new Templates(store),
    campaigns: new Campaigns(store),
    prospects: new Prospects(store),
    sheets: new Sheets(store),
    // No model: messages are the built-in template's.
    writer: new MessageWriter(null),
    maxProspects: 2,
  });
  const workspaces = new Workspaces(store);
  // The context's own needs (the plan gate and charges), not the handlers': none of these is paid.
  payment = new Payment(new Credits(store, workspaces, () => {}), workspaces, new DailyAllowances(store));
});
afterAll(() => store.close());

/** One call's context, as the pipeline makes it, for a caller of `workspaceId` holding every scope. */
function contextFor<Id extends OperationId>(id: Id, input: InputOf<Id>, workspaceId: string): InvocationContext {
  const principal = { kind: 'api_key' as const, credentialId: 'test', workspaceId, scopes: [...SCOPES] };
  const refuse = () => Promise.reject(new Error('outreach invokes no other operation'));
  return new InvocationContext(id, operations[id], input as Record<string, unknown>, principal, payment, { log: pino({ level: 'silent' }), signal: new AbortController().signal }, { credits: 0 }, refuse);
}

async function call<Id extends keyof typeof handlers & OperationId>(id: Id, input: InputOf<Id>, workspaceId: string) {
  const handler = handlers[id] as (input: InputOf<Id>, ctx: InvocationContext) => Promise<unknown>;
  return handler(input, contextFor(id, input, workspaceId)) as Promise<any>;
}

describe('outreach handlers from their factory', () => {
  it('make a campaign from a template and a sheet, within the size they were given', async () => {
    const workspaceId = randomUUID();
    const { sheetId } = await call('createSheet', { name: ' Leads ', rows: [1, 2, 3].map((n) => ({ rowId: `r${n}`, values: { Nome: `Lead ${n}` } })) }, workspaceId);
    const template = await call('createTemplate', { name: 'Intro', campaignName: 'Q1', offering: 'CRM' }, workspaceId);

    // Three rows into a campaign of at most two (maxProspects): refused before any message is asked for.
    await expect(call('createCampaign', { templateId: template.templateId, sheetId, rowIds: ['r1', 'r2', 'r3'] }, workspaceId)).rejects.toMatchObject({ code: 'campaign_full' });
    expect((await call('listCampaigns', {}, workspaceId)).campaigns).toEqual([]);

    const created = await call('createCampaign', { templateId: template.templateId, sheetId, rowIds: ['r1', 'r2'] }, workspaceId);
    expect(created).toMatchObject({ campaignName: 'Q1', created: 2 });
    const campaign = await call('getCampaign', { campaignId: created.campaignId }, workspaceId);
    expect(campaign).toMatchObject({ name: 'Q1', offering: 'CRM' });
    expect(campaign.prospects.map((p: { rowId: string }) => p.rowId).sort()).toEqual(['r1', 'r2']);
    // The campaign is full at two.
    await expect(call('addProspects', { campaignId: created.campaignId, sheetId, rowIds: ['r3'] }, workspaceId)).rejects.toMatchObject({ code: 'campaign_full' });
  });

  it("keep each workspace's records to itself", async () => {
    const owner = randomUUID();
    const template = await call('createTemplate', { name: 'Mine', offering: 'ERP' }, owner);
    expect((await call('listTemplates', {}, randomUUID())).templates).toEqual([]);
    await expect(call('deleteTemplate', { templateId: template.templateId }, randomUUID())).rejects.toMatchObject({ code: 'not_found' });
    expect((await call('listTemplates', {}, owner)).templates).toHaveLength(1);
  });
});
