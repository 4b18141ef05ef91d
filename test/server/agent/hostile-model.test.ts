/**
 * The agent cannot run away (issue 29), against the fake model scripted as a hostile one: calls
 * that are malformed still spend steps; `maxCredits` holds for one paid call whose own input has
 * no cap; call ids numbered afresh in each answer still name distinct calls; and each `tool_call`
 * event says whether the tool writes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { scripted, startFakeLlm, type ChatBody, type FakeLlm, type Turn } from '../../helpers/fake-llm.ts';

let app: TestApp;
let llm: FakeLlm;
const acme = makeCnpj('13222333');
const other = makeCnpj('17888999');

beforeAll(async () => {
  llm = await startFakeLlm(() => 'unused');
  app = await startTestApp({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: llm.key, LLM_MODEL: 'fake-model', LLM_TIMEOUT_MS: '5000', RATE_LIMIT_PER_MINUTE: '10000' });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, other]) await companies.insertOne(companyDoc(cnpj));
});
afterAll(async () => {
  await app?.close();
  await llm?.close();
});
beforeEach(() => {
  llm.reset();
  app.services.config.agent.maxSteps = 3;
});

const play = (turns: Turn[]) => void (llm.respond = scripted(turns));
const modelCalls = () => llm.requests.filter((r) => (r.body as ChatBody | undefined)?.messages).length;
const ofType = (events: Array<{ event: string; data: any }>, name: string) => events.filter((e) => e.event === name).map((e) => e.data);

async function keyFor() {
  const { workspaceId } = await app.workspace('trial');
  return (await app.services.keys.create(workspaceId)).apiKey;
}
const chat = (key: string, body: Record<string, unknown>) => app.request('POST', '/v1/api/agent/chat', { key, body });
const balance = async (key: string) => (await app.request('GET', '/v1/api/credits', { key })).body.balance as number;

describe('a hostile model', () => {
  it('spends its steps on malformed calls too: unknown tools and arguments that are not JSON', async () => {
    const apiKey = await keyFor();
    const nonsense: Turn = { calls: [{ name: 'no_such_tool', arguments: {} }, { name: 'get_credits', arguments: '{not json' }] };
    // It would go on for 40 answers; the message stops it after its 3 steps.
    play([...Array.from({ length: 40 }, () => nonsense), { text: 'done' }]);
    const res = await chat(apiKey, { message: 'Loop' });
    expect(res.status).toBe(200);
    const done = ofType(res.events!, 'done')[0];
    expect(done.steps).toBe(3);
    // Two answers of two malformed calls spend 3 steps (the fourth call is refused), then one answer without tools.
    expect(modelCalls()).toBe(3);
    expect(ofType(res.events!, 'tool_result').every((r) => r.isError)).toBe(true);
  });

  it('cannot spend past maxCredits through one paid call whose input has no cap', async () => {
    const apiKey = await keyFor();
    const before = await balance(apiKey);
    play([{ calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme, other] } }] }, { text: 'Too dear.' }]);
    const res = await chat(apiKey, { message: 'Look both up', maxCredits: 1 });
    expect(res.status).toBe(200);
    const [result] = ofType(res.events!, 'tool_result');
    expect(result).toMatchObject({ tool: 'lookup_cnpj_batch', isError: true, error: 'insufficient_credits', creditsCharged: 0 });
    expect(ofType(res.events!, 'done')[0].creditsCharged).toBe(0);
    expect(await balance(apiKey)).toBe(before);
  });

  it('numbering its call ids afresh in each answer still gets each call run once', async () => {
    const apiKey = await keyFor();
    const before = await balance(apiKey);
    play([
      { calls: [{ id: 'call_0', name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] },
      { calls: [{ id: 'call_0', name: 'lookup_cnpj_batch', arguments: { cnpjs: [other] } }] },
      { calls: [{ id: 'call_0', name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }, { id: 'call_0', name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] },
      { text: 'Both found.' },
    ]);
    app.services.config.agent.maxSteps = 8;
    const res = await chat(apiKey, { message: 'Look them up one by one' });
    const results = ofType(res.events!, 'tool_result');
    expect(results.map((r) => [r.isError, r.creditsCharged])).toEqual([
      [false, 1],
      [false, 1],
      [false, 1],
      [false, 1],
    ]);
    expect(await balance(apiKey)).toBe(before - 4);
  });

  it('each tool_call event says whether the tool writes', async () => {
    const apiKey = await keyFor();
    play([{ calls: [{ name: 'get_credits', arguments: {} }, { name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }, { name: 'no_such_tool', arguments: {} }] }, { text: 'ok' }]);
    const res = await chat(apiKey, { message: 'Go' });
    expect(ofType(res.events!, 'tool_call').map((c) => [c.tool, c.writes])).toEqual([
      ['get_credits', false],
      ['lookup_cnpj_batch', false],
      ['no_such_tool', false],
    ]);
  });

  it('cannot grow a conversation without end, and each message appends to it instead of rewriting it', async () => {
    const apiKey = await keyFor();
    const long = 'x'.repeat(3000);
    play([{ text: long }]);
    const first = await chat(apiKey, { message: 'One' });
    expect(first.status).toBe(200);
    const conversationId = ofType(first.events!, 'done')[0].conversationId as string;
    for (const message of ['Two', 'Three']) expect((await chat(apiKey, { message, conversationId })).status).toBe(200);

    // The conversation's document holds no messages: each exchange is written as documents of its own.
    const doc = await app.services.store.collection<{ _id: string }>('agent_conversations').findOne({ _id: conversationId });
    expect(JSON.stringify(doc).length).toBeLessThan(600);
    const shown = await app.request('GET', `/v1/api/agent/conversations/${conversationId}`, { key: apiKey });
    expect(shown.body.messages.map((m: { role: string; content: string }) => [m.role, m.content.length])).toEqual([
      ['user', 3],
      ['assistant', 3000],
      ['user', 3],
      ['assistant', 3000],
      ['user', 5],
      ['assistant', 3000],
    ]);

    // Past its size limit, a message must start a new conversation.
    await app.services.store.collection<{ _id: string; chars: number }>('agent_conversations').updateOne({ _id: conversationId }, { $set: { chars: 2_000_000 } });
    const full = await chat(apiKey, { message: 'Four', conversationId });
    expect(full.status).toBe(400);
    expect(full.body).toEqual({ error: 'invalid_request', message: expect.stringMatching(/conversation is full .* start a new one/) });
    expect((await chat(apiKey, { message: 'Four' })).status).toBe(200);
  });
});
