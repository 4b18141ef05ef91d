/**
 * The outreach flow through the real server: sheet → template → campaign with messages → review,
 * edits and status changes → history; cadences, add-prospects, limits, isolation between
 * workspaces, and message generation with a loopback model.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collection } from '../../../server/store/port.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { eventually } from '../../helpers/eventually.ts';
import { dataBlocks, startFakeLlm, type ChatBody, type FakeLlm } from '../../helpers/fake-llm.ts';
import { latch } from '../../helpers/latch.ts';

let app: TestApp;
let key: string;

const ROWS = [
  { rowId: 'r1', values: { Nome: 'Ana Souza', Empresa: 'Acme Software', Cargo: 'Diretora Comercial', Cidade: 'Recife' } },
  { rowId: 'r2', values: { Nome: 'Bruno Lima', Empresa: 'Globex', Cargo: 'CTO', Cidade: 'Curitiba' } },
  { rowId: 'r3', values: { Nome: 'Carla Mendes', Empresa: 'Initech', Cargo: 'CEO', Cidade: 'São Paulo' } },
];

beforeAll(async () => {
  app = await startTestApp({ CAMPAIGN_MAX_PROSPECTS: '5' });
  ({ apiKey: key } = await app.workspace());
});
afterAll(() => app.close());

const call = (method: string, path: string, body?: unknown, apiKey = key) =>
  app.request(method, `/v1/api${path}`, { key: apiKey, ...(body === undefined ? {} : { body }) });

async function sheet(rows: Array<{ rowId: string; values: Record<string, string> }> = ROWS, apiKey = key): Promise<string> {
  const res = await call('POST', '/sheets', { name: 'Leads', rows }, apiKey);
  expect(res.status).toBe(201);
  return res.body.sheetId;
}

describe('the whole flow', () => {
  it('sheet → campaign from a template → messages → edits and statuses → history', async () => {
    const sheetId = await sheet();
    const template = await call('POST', '/prospecting/templates', {
      name: 'Recife launch',
      offering: 'Uma plataforma que automatiza a agenda de clínicas. Reduz faltas em 30%.',
      senderName: 'Marina Alves',
      tone: 'amigável',
      language: 'pt-BR',
    });
    expect(template.status).toBe(201);
    const before = (await call('GET', '/credits')).body.balance;

    const created = await call('POST', '/prospecting/campaigns', {
      name: 'Clínicas Q4',
      offering: 'Uma plataforma que automatiza a agenda de clínicas.',
      templateId: template.body.templateId,
      sheetId,
      rowIds: ['r1', 'r2', 'r3', 'r1'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ campaignId: expect.any(String), campaignName: 'Clínicas Q4', created: 3 });
    const { campaignId } = created.body;

    const detail = await call('GET', `/prospecting/campaigns/${campaignId}`);
    expect(detail.body).toMatchObject({
      campaignId,
      status: 'draft',
      templateId: template.body.templateId,
      senderName: 'Marina Alves', // from the template
      offering: 'Uma plataforma que automatiza a agenda de clínicas.', // sent fields prevail
      language: 'pt-BR',
      counts: { ready: 3, sending: 0, awaiting_reply: 0, replied: 0, paused: 0, failed: 0 },
    });
    expect(detail.body.cadence.map((s: { channel: string }) => s.channel)).toEqual(['linkedin', 'email', 'whatsapp', 'email']);
    const ana = detail.body.prospects.find((p: { rowId: string }) => p.rowId === 'r1');
    expect(ana).toMatchObject({ status: 'ready', sheetId, context: ROWS[0]!.values, cadence: null, writer: 'built-in' });
    // The built-in writer, in Portuguese, from the recognised columns: the offering inside a sentence
    // (never pasted after a full stop), the company, the sender, a question (built-in-writer.test.ts reads the rules).
    expect(ana.connectionNote).toMatch(/^Olá, Ana!/);
    expect(ana.connectionNote.length).toBeLessThanOrEqual(300);
    expect(ana.emailSubject).toMatch(/Acme Software/);
    expect(ana.emailBody).toMatch(/^(Olá|Oi), Ana/);
    expect(ana.emailBody).toMatch(/\p{L} uma plataforma que automatiza a agenda de clínicas\./u);
    expect(ana.emailBody).toMatch(/Acme Software/);
    expect(ana.emailBody).toMatch(/\?\n/);
    expect(ana.emailBody).toMatch(/Marina Alves$/);
    expect(detail.body).not.toHaveProperty('languageNote');
    // Rows differing by name and company differ by more than those.
    const bruno = detail.body.prospects.find((p: { rowId: string }) => p.rowId === 'r2');
    expect(bruno.emailBody.replaceAll('Bruno', 'Ana').replaceAll('Globex', 'Acme Software').replace('CTO', 'diretora comercial')).not.toBe(ana.emailBody);

    // Review: edit the message, move the stage; nothing regenerated, nothing charged.
    const edited = await call('PATCH', `/prospecting/prospects/${ana.prospectId}`, { emailSubject: 'Agenda da Acme', connectionNote: ana.connectionNote });
    expect(edited.body).toMatchObject({ emailSubject: 'Agenda da Acme', emailBody: ana.emailBody });
    // The answer is the prospect as stored now, its edit time included.
    expect(edited.body.updatedAt >= ana.updatedAt).toBe(true);
    expect((await call('GET', `/prospecting/prospects/${ana.prospectId}`)).body).toEqual(edited.body);
    await call('PATCH', `/prospecting/prospects/${ana.prospectId}`, { status: 'sending' });
    await call('PATCH', `/prospecting/prospects/${ana.prospectId}`, { status: 'replied' });
    const events = (await call('GET', `/prospecting/prospects/${ana.prospectId}/events`)).body.events;
    expect(events.map((e: { type: string; data: unknown }) => [e.type, e.data])).toEqual([
      ['created', expect.objectContaining({ rowId: 'r1' })],
      ['message_edited', { fields: ['emailSubject'] }],
      ['status_changed', { from: 'ready', to: 'sending' }],
      ['status_changed', { from: 'sending', to: 'replied' }],
    ]);

    const list = await call('GET', '/prospecting/campaigns');
    expect(list.body.campaigns.find((c: { campaignId: string }) => c.campaignId === campaignId).counts).toMatchObject({ ready: 2, replied: 1 });
    expect((await call('GET', `/prospecting/prospects?campaignId=${campaignId}&status=replied`)).body.prospects).toHaveLength(1);
    expect((await call('GET', '/credits')).body.balance).toBe(before);

    // Deleting a prospect removes it and its history; the campaign stays.
    expect((await call('DELETE', `/prospecting/prospects/${ana.prospectId}`)).body).toEqual({ deleted: true, campaignDeleted: false });
    expect((await call('GET', `/prospecting/prospects/${ana.prospectId}/events`)).status).toBe(404);
    expect((await call('GET', `/prospecting/campaigns/${campaignId}`)).body.prospects).toHaveLength(2);
  });
});

describe('templates', () => {
  it('a POST with an existing name updates it; PATCH renames, keeps omitted fields, refuses a taken name', async () => {
    const first = await call('POST', '/prospecting/templates', { name: 'Alpha', offering: 'One', tone: 'formal' });
    const again = await call('POST', '/prospecting/templates', { name: 'Alpha', offering: 'Two' });
    expect(again.body.templateId).toBe(first.body.templateId);
    expect(again.body).toMatchObject({ offering: 'Two', tone: 'formal' });
    await call('POST', '/prospecting/templates', { name: 'Beta', offering: 'Three' });
    const taken = await call('PATCH', `/prospecting/templates/${first.body.templateId}`, { name: 'Beta' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('name_taken');
    const renamed = await call('PATCH', `/prospecting/templates/${first.body.templateId}`, { name: 'Gamma' });
    expect(renamed.body).toMatchObject({ name: 'Gamma', offering: 'Two', tone: 'formal' });
    const names = (await call('GET', '/prospecting/templates')).body.templates.map((t: { name: string }) => t.name);
    expect(names.filter((n: string) => ['Alpha', 'Beta', 'Gamma'].includes(n)).sort()).toEqual(['Beta', 'Gamma']);
  });

  it('a campaign takes every required field from its template, and the fields sent on top', async () => {
    const template = await call('POST', '/prospecting/templates', { name: 'Complete', campaignName: 'Q1 push', offering: 'From the template', tone: 'direto' });
    const { templateId } = template.body;
    const bare = await call('POST', '/prospecting/campaigns', { templateId });
    expect(bare.status).toBe(201);
    expect(bare.body.campaignName).toBe('Q1 push');
    expect((await call('GET', `/prospecting/campaigns/${bare.body.campaignId}`)).body).toMatchObject({ name: 'Q1 push', offering: 'From the template', tone: 'direto' });
    const named = await call('POST', '/prospecting/campaigns', { name: 'c', templateId });
    expect((await call('GET', `/prospecting/campaigns/${named.body.campaignId}`)).body).toMatchObject({ name: 'c', offering: 'From the template' });

    // Without a campaignName, or with a blank one, the template's own name serves: no campaign is named "" (issue 43).
    for (const campaignName of [undefined, '', '   ']) {
      const unnamed = (await call('POST', '/prospecting/templates', { name: `No campaign name ${JSON.stringify(campaignName)}`, offering: 'x', campaignName })).body.templateId;
      const created = await call('POST', '/prospecting/campaigns', { templateId: unnamed });
      expect(created.status).toBe(201);
      expect(created.body.campaignName).toBe(`No campaign name ${JSON.stringify(campaignName)}`);
    }
    // Without a template, the schema requires both.
    for (const body of [{ name: 'c' }, { offering: 'o' }, {}]) {
      const refused = await call('POST', '/prospecting/campaigns', body);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe('templateId, or name and offering is required');
    }
  });

  it('deleting a template leaves the campaigns made from it untouched', async () => {
    const template = await call('POST', '/prospecting/templates', { name: 'Short-lived', offering: 'Kept in the campaign', senderName: 'Rui' });
    const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: 'From template', offering: 'Sent', templateId: template.body.templateId })).body;
    expect((await call('DELETE', `/prospecting/templates/${template.body.templateId}`)).body).toEqual({ deleted: true });
    expect((await call('GET', `/prospecting/campaigns/${campaignId}`)).body).toMatchObject({ senderName: 'Rui', offering: 'Sent' });
  });
});

describe('campaigns and prospects', () => {
  it('PATCH changes the fields sent and keeps the others, the language and the counts', async () => {
    const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: 'Draft', offering: 'Audits', tone: 'warm', language: 'pt-BR', sheetId: await sheet(), rowIds: ['r1'] })).body;
    const res = await call('PATCH', `/prospecting/campaigns/${campaignId}`, { name: 'Renamed', senderName: 'Rui' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ campaignId, name: 'Renamed', senderName: 'Rui', offering: 'Audits', tone: 'warm', language: 'pt-BR', status: 'draft' });
    expect(res.body.counts).toEqual({ ready: 1, sending: 0, awaiting_reply: 0, replied: 0, paused: 0, failed: 0 });
  });

  it('a language the built-in writer does not know: Portuguese messages and cadence, and the campaign says so', async () => {
    const created = await call('POST', '/prospecting/campaigns', { name: 'Klingon', offering: 'um sistema de pedidos', senderName: 'Marina', language: 'tlhIngan Hol', sheetId: await sheet(), rowIds: ['r2'] });
    expect(created.status).toBe(201);
    expect(created.body.languageNote).toMatch(/"tlhIngan Hol".*Portuguese/);
    const detail = (await call('GET', `/prospecting/campaigns/${created.body.campaignId}`)).body;
    expect(detail).toMatchObject({ language: 'tlhIngan Hol', languageNote: created.body.languageNote });
    expect(detail.prospects[0].emailBody).toMatch(/^(Olá|Oi), Bruno/);
    expect(detail.cadence[2].body).toMatch(/^Olá/);
    const listed = (await call('GET', '/prospecting/campaigns')).body.campaigns.find((c: { campaignId: string }) => c.campaignId === created.body.campaignId);
    expect(listed.languageNote).toBe(created.body.languageNote);
    // No language at all is Portuguese, with nothing to say.
    const plain = await call('POST', '/prospecting/campaigns', { name: 'Default', offering: 'um sistema de pedidos', sheetId: await sheet(), rowIds: ['r2'] });
    expect(plain.body).not.toHaveProperty('languageNote');
    expect((await call('GET', `/prospecting/campaigns/${plain.body.campaignId}`)).body.prospects[0].emailBody).toMatch(/^(Olá|Oi), Bruno/);
  });

  it('an empty draft has no cadence yet: editing it is 409', async () => {
    const { campaignId, created } = (await call('POST', '/prospecting/campaigns', { name: 'Empty', offering: 'x' })).body;
    expect(created).toBe(0);
    const res = await call('PATCH', `/prospecting/campaigns/${campaignId}/cadence`, { steps: [{ day: 0, channel: 'email', body: 'Hi' }] });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('cadence_not_generated');
  });

  it('adds prospects, skipping rows already in; cadence edits for the campaign and for one prospect', async () => {
    const sheetId = await sheet();
    const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: 'Adds', offering: 'Scheduling software', sheetId, rowIds: ['r1'] })).body;
    const added = await call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds: ['r1', 'r2'] });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ ok: true, added: 1, skipped: 1 });

    const steps = [
      { day: 0, channel: 'email', subject: 'Hello', body: 'Hi {{firstName}}' },
      { day: 3, channel: 'whatsapp', body: 'Ping' },
    ];
    const edited = await call('PATCH', `/prospecting/campaigns/${campaignId}/cadence`, { steps });
    expect(edited.body).toEqual({ campaignId, cadence: steps });
    const prospects = (await call('GET', `/prospecting/prospects?campaignId=${campaignId}`)).body.prospects;
    const own = await call('PATCH', `/prospecting/campaigns/${campaignId}/cadence`, { steps: [steps[1]], prospectId: prospects[0].prospectId });
    expect(own.body).toEqual({ campaignId, prospectId: prospects[0].prospectId, cadence: [steps[1]] });
    expect((await call('GET', `/prospecting/prospects/${prospects[0].prospectId}`)).body.cadence).toEqual([steps[1]]);
    const history = (await call('GET', `/prospecting/prospects/${prospects[0].prospectId}/events`)).body.events.map((e: { type: string }) => e.type);
    expect(history).toEqual(['created', 'cadence_edited', 'cadence_edited']);

    // A prospect of another campaign cannot be edited through this one.
    const other = (await call('POST', '/prospecting/campaigns', { name: 'Other', offering: 'x', sheetId, rowIds: ['r3'] })).body.campaignId;
    const stranger = (await call('GET', `/prospecting/prospects?campaignId=${other}`)).body.prospects[0].prospectId;
    expect((await call('PATCH', `/prospecting/campaigns/${campaignId}/cadence`, { steps, prospectId: stranger })).status).toBe(404);
  });

  it('unknown sheet, template or campaign → 404; rows not in the sheet → 400 naming them; nothing created', async () => {
    const sheetId = await sheet();
    const missing = randomUUID();
    expect((await call('POST', '/prospecting/campaigns', { name: 'x', offering: 'y', sheetId: missing, rowIds: ['r1'] })).status).toBe(404);
    expect((await call('POST', '/prospecting/campaigns', { name: 'x', offering: 'y', templateId: missing })).status).toBe(404);
    expect((await call('POST', `/prospecting/campaigns/${missing}/prospects`, { sheetId, rowIds: ['r1'] })).status).toBe(404);
    const bad = await call('POST', '/prospecting/campaigns', { name: 'Not created', offering: 'y', sheetId, rowIds: ['r1', 'nope', 'gone'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/"nope", "gone"/);
    const names = (await call('GET', '/prospecting/campaigns')).body.campaigns.map((c: { name: string }) => c.name);
    expect(names).not.toContain('Not created');
  });

  it('a campaign is full at CAMPAIGN_MAX_PROSPECTS: 409 and nothing added', async () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({ rowId: `f${i}`, values: { Name: `Person ${i}` } }));
    const sheetId = await sheet(rows);
    const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: 'Full', offering: 'x', sheetId, rowIds: ['f0', 'f1', 'f2', 'f3'] })).body;
    const over = await call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds: ['f4', 'f5'] });
    expect(over.status).toBe(409);
    expect(over.body.error).toBe('campaign_full');
    expect((await call('GET', `/prospecting/prospects?campaignId=${campaignId}`)).body.prospects).toHaveLength(4);
    expect((await call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds: ['f4'] })).body).toMatchObject({ added: 1 });
  });

  it('a store write failing after the prospects went in takes them back, history included, and frees their places', async () => {
    const rows = Array.from({ length: 5 }, (_, i) => ({ rowId: `w${i}`, values: { Name: `Person ${i}` } }));
    const sheetId = await sheet(rows);
    const rowIds = rows.map((r) => r.rowId);
    const events = (app.services.prospects as unknown as { events: Collection<{ _id: string }> }).events;
    const createdEvents = (campaignId: string) => events.countDocuments({ type: 'created', 'data.campaignId': campaignId });
    /** Fails `method` of `target` (a real store write) for one call of `run`. */
    async function failing<R>(target: object, method: string, run: () => Promise<R>): Promise<R> {
      const writable = target as Record<string, unknown>;
      const original = writable[method];
      writable[method] = async () => {
        throw new Error(`${method} failed`);
      };
      try {
        return await run();
      } finally {
        writable[method] = original;
      }
    }
    // The prospects' history, then the campaign's first cadence.
    for (const [target, method] of [[events, 'bulkWrite'], [app.services.campaigns, 'ensureCadence']] as const) {
      const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: `Fails at ${method}`, offering: 'x' })).body;
      const failed = await failing(target, method, () => call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds }));
      expect(failed.status).toBe(500);
      expect((await call('GET', `/prospecting/prospects?campaignId=${campaignId}`)).body.prospects).toEqual([]);
      expect(await createdEvents(campaignId)).toBe(0);
      // Every place came back: all five rows (the campaign's maximum) still fit.
      expect((await call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds })).body).toMatchObject({ added: 5 });
      expect(await createdEvents(campaignId)).toBe(5);
    }
    // Creating a campaign with rows is all or nothing too.
    const failed = await failing(app.services.campaigns, 'ensureCadence', () =>
      call('POST', '/prospecting/campaigns', { name: 'Never made', offering: 'x', sheetId, rowIds }),
    );
    expect(failed.status).toBe(500);
    const names = (await call('GET', '/prospecting/campaigns')).body.campaigns.map((c: { name: string }) => c.name);
    expect(names).not.toContain('Never made');
    expect(await events.countDocuments({ type: 'created', 'data.sheetId': sheetId })).toBe(10);
  });

  it('concurrent adds of the same rows never create duplicates', async () => {
    const sheetId = await sheet();
    const { campaignId } = (await call('POST', '/prospecting/campaigns', { name: 'Race', offering: 'x' })).body;
    const results = await Promise.all(
      Array.from({ length: 4 }, () => call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId, rowIds: ['r1', 'r2', 'r3'] })),
    );
    // Each add reserves its places first: with room for 5, a racing add may be told the campaign is full.
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(results.reduce((n, r) => n + (r.body.added ?? 0), 0)).toBe(3);
    expect((await call('GET', `/prospecting/prospects?campaignId=${campaignId}`)).body.prospects).toHaveLength(3);
    // The reserved places were given back for the duplicates: two more still fit under 5.
    const more = await sheet([{ rowId: 'x1', values: { Name: 'X' } }, { rowId: 'x2', values: { Name: 'Y' } }]);
    expect((await call('POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId: more, rowIds: ['x1', 'x2'] })).body.added).toBe(2);
  });

  it('without an active plan outreach answers 402 plan_required', async () => {
    const { apiKey } = await app.workspace('none');
    const res = await call('GET', '/prospecting/templates', undefined, apiKey);
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('plan_required');
  });
});

describe('isolation between workspaces', () => {
  it('every path-addressed operation answers 404 from another workspace', async () => {
    const sheetId = await sheet();
    const template = (await call('POST', '/prospecting/templates', { name: 'Mine', offering: 'x' })).body.templateId;
    const campaignId = (await call('POST', '/prospecting/campaigns', { name: 'Mine', offering: 'x', sheetId, rowIds: ['r1'] })).body.campaignId;
    const prospectId = (await call('GET', `/prospecting/prospects?campaignId=${campaignId}`)).body.prospects[0].prospectId;
    const { apiKey: theirs } = await app.workspace();
    const theirSheet = await sheet(ROWS, theirs);
    const probes: Array<[string, string, unknown?]> = [
      ['PATCH', `/prospecting/templates/${template}`, { name: 'Stolen' }],
      ['DELETE', `/prospecting/templates/${template}`],
      ['GET', `/prospecting/campaigns/${campaignId}`],
      ['PATCH', `/prospecting/campaigns/${campaignId}`, { name: 'Stolen' }],
      ['PATCH', `/prospecting/campaigns/${campaignId}/cadence`, { steps: [{ day: 0, channel: 'email', body: 'x' }] }],
      ['POST', `/prospecting/campaigns/${campaignId}/prospects`, { sheetId: theirSheet, rowIds: ['r1'] }],
      ['GET', `/prospecting/prospects/${prospectId}`],
      ['PATCH', `/prospecting/prospects/${prospectId}`, { status: 'paused' }],
      ['DELETE', `/prospecting/prospects/${prospectId}`],
      ['GET', `/prospecting/prospects/${prospectId}/events`],
      ['GET', `/sheets/${sheetId}`],
      ['PUT', `/sheets/${sheetId}/rows`, { rows: [{ rowId: 'r9', values: {} }] }],
      ['DELETE', `/sheets/${sheetId}`],
      ['POST', '/prospecting/campaigns', { name: 'x', offering: 'y', sheetId, rowIds: ['r1'] }],
      ['POST', '/prospecting/campaigns', { name: 'x', offering: 'y', templateId: template }],
    ];
    for (const [method, path, body] of probes) {
      const res = await call(method, path, body, theirs);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await call('GET', '/prospecting/prospects', undefined, theirs)).body.prospects).toEqual([]);
    expect((await call('GET', '/prospecting/campaigns', undefined, theirs)).body.campaigns).toEqual([]);
    // Untouched for their owner.
    expect((await call('GET', `/prospecting/prospects/${prospectId}`)).body.status).toBe('ready');
  });
});

describe('sheets', () => {
  it('upserts rows by rowId, keeps their order, and deletes', async () => {
    const sheetId = await sheet();
    const res = await call('PUT', `/sheets/${sheetId}/rows`, { rows: [{ rowId: 'r2', values: { Nome: 'Bruno L.' } }, { rowId: 'r4', values: { Nome: 'Dora' } }] });
    expect(res.body).toEqual({ sheetId, rowCount: 4 });
    const read = (await call('GET', `/sheets/${sheetId}`)).body;
    expect(read.rows.map((r: { rowId: string }) => r.rowId)).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(read.rows[1].values).toEqual({ Nome: 'Bruno L.' });
    expect((await call('DELETE', `/sheets/${sheetId}`)).body).toEqual({ deleted: true });
    expect((await call('GET', `/sheets/${sheetId}`)).status).toBe(404);
  });
});

describe('messages written by a model', () => {
  let llm: FakeLlm;
  let withModel: TestApp;

  beforeAll(async () => {
    llm = await startFakeLlm((body: ChatBody) => {
      const row = dataBlocks(body).row as Record<string, string>;
      return JSON.stringify({ connectionNote: `Oi ${row.Nome}!`, emailSubject: `Para ${row.Empresa}`, emailBody: `Corpo para ${row.Nome}` });
    });
    withModel = await startTestApp({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: llm.key, LLM_MODEL: 'fake-model' });
  });
  afterAll(async () => {
    await withModel.close();
    await llm.close();
  });

  it('writes each row with the model, concurrently, and falls back to the built-in writer when it fails', async () => {
    const { apiKey } = await withModel.workspace();
    const sheetId = (await withModel.request('POST', '/v1/api/sheets', { key: apiKey, body: { name: 'S', rows: ROWS } })).body.sheetId;
    // The model answers once all three rows are with it: concurrency seen, not hoped for in a delay.
    const answers = latch();
    llm.next({ until: answers.promise }, 3);
    const creating = withModel.request('POST', '/v1/api/prospecting/campaigns', {
      key: apiKey,
      body: { name: 'Model', offering: 'Agenda', language: 'pt-BR', sheetId, rowIds: ['r1', 'r2', 'r3'] },
    });
    await eventually(() => expect(llm.requests).toHaveLength(3), { message: 'the three rows at the model at once' });
    answers.open();
    const created = await creating;
    expect(created.body.created).toBe(3);
    expect(llm.maxInFlight).toBe(3);
    const prospects = (await withModel.request('GET', `/v1/api/prospecting/prospects?campaignId=${created.body.campaignId}`, { key: apiKey })).body.prospects;
    expect(prospects.find((p: { rowId: string }) => p.rowId === 'r2')).toMatchObject({ connectionNote: 'Oi Bruno Lima!', emailSubject: 'Para Globex', writer: 'model' });

    // Too long twice (the model ignored the limit), then the built-in writer.
    const respond = llm.respond;
    llm.respond = () => JSON.stringify({ connectionNote: 'x'.repeat(301), emailSubject: 's', emailBody: 'b' });
    const fallback = await withModel.request('POST', '/v1/api/prospecting/campaigns', { key: apiKey, body: { name: 'Fallback', offering: 'Agenda', sheetId, rowIds: ['r1'] } });
    llm.respond = respond;
    const p = (await withModel.request('GET', `/v1/api/prospecting/prospects?campaignId=${fallback.body.campaignId}`, { key: apiKey })).body.prospects[0];
    expect(p).toMatchObject({ writer: 'built-in' });
    expect(p.connectionNote.length).toBeLessThanOrEqual(300);
  });

  it('a client that leaves during generation leaves no campaign and no prospect behind', async () => {
    const { apiKey } = await withModel.workspace();
    const sheetId = (await withModel.request('POST', '/v1/api/sheets', { key: apiKey, body: { name: 'S', rows: ROWS } })).body.sheetId;
    llm.reset();
    // Longer than any wait below, so no answer can beat the hang-up however slow the machine.
    llm.latencyMs = 30_000;
    const controller = new AbortController();
    const request = fetch(`${withModel.url}/v1/api/prospecting/campaigns`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Abandoned', offering: 'x', sheetId, rowIds: ['r1', 'r2', 'r3'] }),
      signal: controller.signal,
    }).catch(() => null);
    await eventually(() => expect(llm.requests).toHaveLength(3), { message: 'the three calls to the model' });
    controller.abort();
    await request;
    await eventually(() => expect(llm.cancelled).toBe(3), { message: 'the model to see its three calls cancelled' });
    llm.latencyMs = 0;
    // The server undoes after the calls fail: wait for that, not for a fixed time.
    await eventually(
      async () => {
        expect((await withModel.request('GET', '/v1/api/prospecting/campaigns', { key: apiKey })).body.campaigns).toEqual([]);
        expect((await withModel.request('GET', '/v1/api/prospecting/prospects', { key: apiKey })).body.prospects).toEqual([]);
      },
      { message: 'the abandoned campaign to be undone' },
    );
  });
});
