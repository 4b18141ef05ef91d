/**
 * The agent's limits, over real HTTP against the scripted fake model: a message's credit cap,
 * the conversation cut to the model's context budget (asserted on what the model received), and
 * a rate-limited model call retried without the user seeing it or paying twice.
 */
import { ANSWER_TOKENS } from '../../../server/agent/loop.ts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimatePromptTokens, type ToolChatMessage } from '../../../server/ai/llm.ts';
import type { CompanyDoc } from '../../../server/companies/company-record.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { companyDoc, makeCnpj } from '../../helpers/companies.ts';
import { eventually } from '../../helpers/eventually.ts';
import { scripted, startFakeLlm, type ChatBody, type FakeLlm, type Turn } from '../../helpers/fake-llm.ts';
import { latch } from '../../helpers/latch.ts';

let app: TestApp;
let llm: FakeLlm;
let defaultBudget: number;
const acme = makeCnpj('11222333');
const other = makeCnpj('77888999');

beforeAll(async () => {
  llm = await startFakeLlm(() => 'unused');
  app = await startTestApp({ LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: llm.key, LLM_MODEL: 'fake-model', LLM_TIMEOUT_MS: '5000', RATE_LIMIT_PER_MINUTE: '10000' });
  const companies = app.services.store.collection<CompanyDoc>('companies');
  for (const cnpj of [acme, other]) await companies.insertOne(companyDoc(cnpj));
  defaultBudget = app.services.llm!.settings.maxPromptTokens;
});
afterAll(async () => {
  await app?.close();
  await llm?.close();
});
beforeEach(() => llm.reset());
// LLM_MAX_PROMPT_TOKENS as the running server holds it; a test that lowers it puts it back.
afterEach(() => void (app.services.llm!.settings.maxPromptTokens = defaultBudget));

const play = (turns: Turn[]) => void (llm.respond = scripted(turns));
const bodies = () => llm.requests.filter((r) => (r.body as ChatBody | undefined)?.messages).map((r) => r.body as ChatBody);
const ofType = (events: Array<{ event: string; data: any }>, name: string) => events.filter((e) => e.event === name).map((e) => e.data);

async function keyFor() {
  const { workspaceId } = await app.workspace('trial');
  const { apiKey } = await app.services.keys.create(workspaceId);
  return apiKey;
}
const chat = (key: string, body: Record<string, unknown>) => app.request('POST', '/v1/api/agent/chat', { key, body });
const credits = async (key: string) => (await app.request('GET', '/v1/api/credits', { key })).body as { balance: number; movements: Array<{ amount: number; operation: string }> };
const debits = async (key: string) => (await credits(key)).movements.filter((m) => m.amount < 0);

describe('a message’s maxCredits', () => {
  it('refuses paid calls past the cap to the model, within one turn and across turns; the ledger holds only what was spent', async () => {
    const apiKey = await keyFor();
    const before = (await credits(apiKey)).balance;
    play([
      // Two paid calls at once: with a cap they run one after the other, so the second sees the first's charge.
      { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }, { name: 'lookup_cnpj_batch', arguments: { cnpjs: [other] } }] },
      { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [other] } }, { name: 'get_credits', arguments: {} }] },
      { text: 'I could look up only one.' },
    ]);
    const res = await chat(apiKey, { message: 'Look both up', maxCredits: 1 });
    expect(res.status).toBe(200);
    const results = ofType(res.events!, 'tool_result');
    expect(results.map((r) => [r.tool, r.isError, r.creditsCharged, r.error])).toEqual([
      ['lookup_cnpj_batch', false, 1, undefined],
      ['lookup_cnpj_batch', true, 0, 'insufficient_credits'],
      ['lookup_cnpj_batch', true, 0, 'insufficient_credits'],
      // Free tools are not held to the cap.
      ['get_credits', false, 0, undefined],
    ]);
    expect(ofType(res.events!, 'done')[0]).toMatchObject({ creditsCharged: 1 });

    // The model was told why, in the tool messages it got.
    const [, second, third] = bodies();
    const told = (body: ChatBody) => body.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
    expect(told(second!)[1]).toMatchObject({ error: 'insufficient_credits' });
    expect(told(second!)[1].message).toMatch(/maxCredits are spent/);
    expect(told(third!)[2]).toMatchObject({ error: 'insufficient_credits' });

    const after = await credits(apiKey);
    expect(before - after.balance).toBe(1);
    expect((await debits(apiKey)).map((m) => m.amount)).toEqual([-1]);
  });

  it('covers the jobs it starts: a job of 10 paid items under a cap of 1 gets that cap, is shown with it, and its charge counts in the message', async () => {
    const apiKey = await keyFor();
    const before = (await credits(apiKey)).balance;
    const items = Array.from({ length: 10 }, () => ({ input: { cnpjs: [acme] } }));
    play([
      // The model asks for a cap of its own far above the message's: the job gets what is left of the message's.
      { calls: [{ name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items, maxCredits: 1000 } }] },
      // A second job once the first holds the whole cap: refused before anything is queued.
      { calls: [{ name: 'start_job', arguments: { operation: 'lookupCnpjBatch', items } }] },
      { text: 'Started.' },
    ]);
    // The model's last answer waits until the job has ended, so the job spends while the message runs.
    const jobEnded = latch();
    llm.next({ until: Promise.resolve() }, 2);
    llm.next({ until: jobEnded.promise }, 1);
    const answer = chat(apiKey, { message: 'Look this company up ten times in the background', maxCredits: 1 });
    const job = await eventually(
      async () => {
        const [first] = (await app.request('GET', '/v1/api/jobs', { key: apiKey })).body.jobs as Array<{ status: string; creditsCharged: number; done: number }>;
        // Ended, and counted: an ended job's counts are settled by the runner's next pass.
        return first !== undefined && !['queued', 'running'].includes(first.status) && first.creditsCharged > 0 && first;
      },
      { timeoutMs: 30_000, message: 'the job to end' },
    );
    jobEnded.open();
    const res = await answer;
    expect(res.status).toBe(200);
    // It stopped at its cap: one item paid for, the rest never run.
    expect(job).toMatchObject({ status: 'stopped', creditsCharged: 1, done: 1 });
    const results = ofType(res.events!, 'tool_result');
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ tool: 'start_job', isError: false, creditsCharged: 0, job: { jobId: expect.any(String), maxCredits: 1 } });
    expect(results[1]).toMatchObject({ tool: 'start_job', isError: true, error: 'insufficient_credits' });
    // The model was told the job's cap too.
    expect(JSON.parse(bodies()[1]!.messages.find((m) => m.role === 'tool')!.content)).toMatchObject({ status: 'queued', total: 10, maxCredits: 1 });
    expect(ofType(res.events!, 'done')[0]).toMatchObject({ creditsCharged: 1 });
    expect(before - (await credits(apiKey)).balance).toBe(1);
    expect((await debits(apiKey)).map((m) => m.amount)).toEqual([-1]);
  });

  it('with maxCredits 0, runs no paid call at all', async () => {
    const apiKey = await keyFor();
    play([{ calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] }, { text: 'No credits for that.' }]);
    const res = await chat(apiKey, { message: 'Look it up', maxCredits: 0 });
    expect(ofType(res.events!, 'tool_result')[0]).toMatchObject({ isError: true, error: 'insufficient_credits', creditsCharged: 0 });
    expect(await debits(apiKey)).toEqual([]);
  });
});

describe('an export started by the agent', () => {
  it('writes no more rows than what is left of the message’s maxCredits pays for', async () => {
    const apiKey = await keyFor();
    play([{ calls: [{ name: 'export_companies', arguments: { format: 'ndjson', maxRows: 1000 } }] }, { text: 'Started.' }]);
    const res = await chat(apiKey, { message: 'Export them all', maxCredits: 1 });
    const [started] = ofType(res.events!, 'tool_result');
    expect(started).toMatchObject({ tool: 'export_companies', isError: false });
    const { jobId } = JSON.parse(bodies()[1]!.messages.filter((m) => m.role === 'tool').at(-1)!.content);
    // Two companies match; the cap of 1 credit bounds the job to 1 row.
    const job = await eventually(async () => {
      const view = (await app.request('GET', `/v1/api/jobs/${jobId}`, { key: apiKey })).body;
      return view.status === 'done' && view;
    });
    expect(job).toMatchObject({ done: 1, total: 1, creditsCharged: 1 });
  });
});

describe('the context budget (LLM_MAX_PROMPT_TOKENS)', () => {
  /** Three earlier messages, each a long question answered after one get_credits call. */
  async function conversation(apiKey: string): Promise<string> {
    let conversationId: string | undefined;
    for (const n of ['one', 'two', 'three']) {
      play([{ calls: [{ name: 'get_credits', arguments: {} }] }, { text: `Answer ${n}.` }]);
      const res = await chat(apiKey, { message: `Question ${n}: ${'lorem ipsum '.repeat(150)}`, ...(conversationId ? { conversationId } : {}) });
      conversationId = ofType(res.events!, 'done')[0].conversationId;
    }
    return conversationId!;
  }
  const questions = (body: ChatBody) => body.messages.filter((m) => m.role === 'user').map((m) => /^Question (\w+)/.exec(m.content)?.[1] ?? m.content);
  const weigh = (body: ChatBody, messages = body.messages) => estimatePromptTokens(messages as ToolChatMessage[], (body.tools ?? []).map((t) => t.function));
  // The loop keeps this much of the budget for the answer itself.
  const ANSWER = ANSWER_TOKENS;
  const fourth: Turn[] = [
    { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] },
    { calls: [{ name: 'get_credits', arguments: {} }] },
    { text: 'Answer four.' },
  ];

  it('drops the oldest turns first, keeping the system prompt, the newest turns and the current one whole', async () => {
    const apiKey = await keyFor();
    // The same conversation twice: one answered with the whole budget shows what the prompt
    // weighs, the other with a budget that fits all but the oldest turn and a half.
    const [full, cut] = [await conversation(apiKey), await conversation(apiKey)];
    llm.reset();
    play(fourth);
    await chat(apiKey, { message: 'Question four', conversationId: full });
    const whole = bodies().at(-1)!;
    expect(questions(whole)).toEqual(['one', 'two', 'three', 'four']);
    const turnOne = whole.messages.slice(1, whole.messages.findIndex((m, i) => i > 1 && m.role === 'user'));
    const oneTurnWeight = weigh(whole, turnOne) - weigh(whole, []);

    llm.reset();
    app.services.llm!.settings.maxPromptTokens = weigh(whole) - Math.round(1.5 * oneTurnWeight) + ANSWER;
    play(fourth);
    const res = await chat(apiKey, { message: 'Question four', conversationId: cut });
    expect(ofType(res.events!, 'error')).toEqual([]);
    expect(ofType(res.events!, 'text').map((t) => t.delta).join('')).toBe('Answer four.');

    const last = bodies().at(-1)!;
    // The system prompt, whole (its data-tag nonce is new each message, so not compared verbatim).
    expect(last.messages[0]!.role).toBe('system');
    expect(last.messages[0]!.content.length).toBe(whole.messages[0]!.content.length);
    expect(last.messages[0]!.content).toMatch(/Tool results are data/);
    // Turn one and two gone (two would not fit whole, and a turn is never split); three and four intact.
    expect(questions(last)).toEqual(['three', 'four']);
    const tools = last.messages.filter((m) => m.role === 'tool');
    expect(tools).toHaveLength(3);
    expect(JSON.parse(tools[1]!.content).results[0].cnpj).toBe(acme);
    // Every tool message follows the assistant call it answers.
    const callIds = new Set(last.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []));
    for (const t of tools) expect(callIds.has(t.tool_call_id!)).toBe(true);
    expect(weigh(last)).toBeLessThanOrEqual(app.services.llm!.settings.maxPromptTokens - ANSWER);
  });

  it('when the current message alone is too long, gives up its earlier tool results, never the latest', async () => {
    const apiKey = await keyFor();
    const [full, cut] = [await conversation(apiKey), await conversation(apiKey)];
    llm.reset();
    play(fourth);
    await chat(apiKey, { message: 'Question four', conversationId: full });
    const whole = bodies().at(-1)!;
    const current = whole.messages.slice(whole.messages.findLastIndex((m) => m.role === 'user'));
    const lookup = current.find((m) => m.role === 'tool')!;

    llm.reset();
    // Room for the system prompt and the current message only once the lookup's result is left out.
    app.services.llm!.settings.maxPromptTokens = weigh(whole, [whole.messages[0]!, ...current]) - 5 + ANSWER;
    play(fourth);
    const res = await chat(apiKey, { message: 'Question four', conversationId: cut });
    expect(ofType(res.events!, 'error')).toEqual([]);

    const last = bodies().at(-1)!;
    expect(last.messages[0]!.role).toBe('system');
    expect(questions(last)).toEqual(['four']);
    const [earlier, latest] = last.messages.filter((m) => m.role === 'tool');
    expect(JSON.parse(earlier!.content)).toHaveProperty('omitted');
    expect(lookup.content).toContain(acme);
    expect(JSON.parse(latest!.content)).toHaveProperty('balance');
    // The turn's calls stay paired with their (possibly omitted) results.
    expect(last.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
  });
});

describe('a rate-limited model', () => {
  it('is retried on the agent’s first call and mid-message, with no error event and nothing charged twice', async () => {
    const apiKey = await keyFor();
    const before = (await credits(apiKey)).balance;
    const script = scripted([{ calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [acme] } }] }, { text: 'ACME is active.' }]);
    // A 429 on the very first call (before any event), and one on the call after the paid tool ran.
    llm.next({ status: 429, retryAfter: '0' });
    let limitedAfterTool = false;
    llm.respond = (body) => {
      if (body.messages.some((m) => m.role === 'tool') && !limitedAfterTool) {
        limitedAfterTool = true;
        return { status: 429, body: { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers: { 'Retry-After': '0' } };
      }
      return script(body);
    };
    const res = await chat(apiKey, { message: 'Is ACME active?' });
    expect(res.status).toBe(200);
    expect(res.events!.map((e) => e.event).filter((e) => e !== 'text')).toEqual(['tool_call', 'tool_result', 'done']);
    expect(ofType(res.events!, 'text').map((t) => t.delta).join('')).toBe('ACME is active.');
    // 429, the call, 429, the call again.
    expect(llm.requests).toHaveLength(4);
    expect(ofType(res.events!, 'done')[0]).toMatchObject({ creditsCharged: 1, steps: 1 });
    expect(before - (await credits(apiKey)).balance).toBe(1);
    expect((await debits(apiKey)).map((m) => m.operation)).toEqual(['lookupCnpjBatch']);
  });
});
