/**
 * The model client against a loopback model: what each failure becomes (an LlmError with its
 * message, or the reason of the caller's abort), never an SDK error, and how often it retries.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Llm, LlmError, type ChatRequest, type LlmSettings } from '../../../server/ai/llm.ts';
import type { Store } from '../../../server/store/port.ts';
import { startFakeLlm, type FakeLlm } from '../../helpers/fake-llm.ts';

let model: FakeLlm;
const open: Llm[] = [];
/** Usage records are not what these tests look at. */
const store = { collection: () => ({ updateOne: async () => ({}) }) } as unknown as Store;

beforeAll(async () => {
  model = await startFakeLlm(() => 'Ana');
});
afterAll(() => model.close());
afterEach(async () => {
  model.reset();
  await Promise.all(open.splice(0).map((llm) => llm.close()));
});

function llm(settings: Partial<LlmSettings> = {}): Llm {
  const client = new Llm(
    {
      baseUrl: model.baseUrl,
      apiKey: model.key,
      model: 'fake-model',
      timeoutMs: 1000,
      maxConcurrent: 2,
      perMinute: undefined,
      maxPromptTokens: 1000,
      maxRetries: 2,
      ...settings,
    },
    store,
  );
  open.push(client);
  return client;
}

const chat = (signal: AbortSignal = new AbortController().signal): ChatRequest => ({
  messages: [{ role: 'user', content: 'first name of Ana Souza' }],
  maxTokens: 10,
  workspaceId: 'ws',
  purpose: 'test',
  signal,
});

async function rejection(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('Llm.chat', () => {
  it('answers the text and its token counts', async () => {
    expect(await llm().chat(chat())).toEqual({ text: 'Ana', promptTokens: 120, completionTokens: 12 });
  });

  it('retries 5xx twice, then fails with an LlmError naming the status', async () => {
    model.next({ status: 503 }, Infinity);
    const err = await rejection(llm().chat(chat()));
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ code: 'ai_unavailable', message: 'The model failed (HTTP 503).' });
    expect(model.requests).toHaveLength(3);
  });

  it('does not retry a refused key', async () => {
    const err = await rejection(llm({ apiKey: 'wrong' }).chat(chat()));
    expect(err).toMatchObject({ code: 'ai_unavailable', message: 'The model refused the API key (check LLM_API_KEY).' });
    expect(model.requests).toHaveLength(1);
  });

  it('does not retry a model that ran out of time', async () => {
    model.next({ hang: true }, Infinity);
    const err = await rejection(llm({ timeoutMs: 200 }).chat(chat()));
    expect(err).toMatchObject({ code: 'ai_unavailable', message: 'The model did not answer in time.' });
    expect(model.requests).toHaveLength(1);
  });

  it('ends with the reason of the caller’s abort, not the SDK’s error, and calls no more', async () => {
    model.next({ hang: true }, Infinity);
    const controller = new AbortController();
    const call = llm().chat(chat(controller.signal));
    await vi.waitFor(() => expect(model.requests).toHaveLength(1));
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(await rejection(call)).toBe(reason);
    expect(model.requests).toHaveLength(1);
  });

  it('says a model that cannot be reached cannot be reached', async () => {
    const err = await rejection(llm({ baseUrl: 'http://127.0.0.1:9/v1' }).chat(chat()));
    expect(err).toBeInstanceOf(LlmError);
    expect(err.message).toBe('The model could not be reached.');
  });
});
