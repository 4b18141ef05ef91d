/**
 * The operation pipeline on its own, with no HTTP: what every binding (HTTP, MCP, the agent)
 * gets by calling `invoke`. Scope, validation and the plan gate are decided before a handler
 * runs; charges settle through the ledger and are counted on the outcome's receipt.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../../shared/operations/types.ts';
import type { Caller } from '../../../server/invocation/caller.ts';
import type { PlanName } from '../../../server/credits/plans.ts';
import type { Handlers } from '../../../server/invocation/handler.ts';
import { createHandlers } from '../../../server/start/handlers.ts';
import { createPipeline, type InvokeOptions, type Pipeline } from '../../../server/pipeline/pipeline.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
let pipeline: Pipeline;
const ran: string[] = [];
const options: InvokeOptions = { log: pino({ level: 'silent' }), signal: new AbortController().signal };

const person = (name: string, source: string) => ({ name, source, emailStatus: 'unavailable' });

const spies: Partial<Handlers> = {
  searchPeople: async (input, ctx) => {
    ran.push('searchPeople');
    const rows = Array.from({ length: input.limit ?? 3 }, (_, i) => person(`Person ${i}`, 'demo'));
    await ctx.charge(rows.length, `${rows.length} people`);
    return { results: rows, sources: [{ source: 'demo', count: rows.length }], nextCursor: null, creditsCharged: ctx.creditsCharged };
  },
  async *streamPeople(_input, ctx) {
    ran.push('streamPeople');
    for (const source of ['lists', 'demo']) {
      await ctx.charge(2, `2 people from ${source}`);
      yield { event: 'page', data: { source, results: [person(`A ${source}`, source), person(`B ${source}`, source)] } };
    }
    yield { event: 'done', data: { total: 4, sources: [], creditsCharged: ctx.creditsCharged } };
  },
};

async function caller(plan: PlanName = 'trial', scopes: Scope[] = [...SCOPES]): Promise<Caller & { workspaceId: string }> {
  const { workspaceId } = await app.workspace(plan);
  return { principal: { kind: 'api_key', credentialId: `test-${workspaceId}`, workspaceId, scopes }, refused: null, workspaceId };
}

beforeAll(async () => {
  app = await startTestApp();
  pipeline = createPipeline(app.services, { ...createHandlers(app.services), ...spies });
});
afterAll(() => app.close());

describe('invoke', () => {
  it('refuses an anonymous or refused caller, and a caller without the scope, before anything runs', async () => {
    ran.length = 0;
    await expect(pipeline.invoke('searchPeople', { principal: null, refused: null }, { body: {} }, options)).rejects.toMatchObject({
      code: 'unauthorized',
      details: { credentialRefused: false },
    });
    await expect(
      pipeline.invoke('searchPeople', { principal: null, refused: { code: 'unauthorized', message: 'The API key is invalid or has been revoked.' } }, { body: {} }, options),
    ).rejects.toMatchObject({ code: 'unauthorized', message: 'The API key is invalid or has been revoked.', details: { credentialRefused: true } });
    const reader = await caller('trial', ['credits:read']);
    await expect(pipeline.invoke('searchPeople', reader, { body: {} }, options)).rejects.toMatchObject({
      code: 'insufficient_scope',
      details: { scope: 'search:write' },
    });
    expect(ran).toEqual([]);
  });

  it('validates every declared part and names the field; the handler never sees invalid input', async () => {
    ran.length = 0;
    const who = await caller();
    await expect(pipeline.invoke('searchPeople', who, { body: { limit: 26 } }, options)).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'limit must be <= 25',
    });
    await expect(pipeline.invoke('getProspect', who, { params: { prospectId: 'nope' } }, options)).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'prospectId must be a UUID',
    });
    expect(ran).toEqual([]);
  });

  it('gates plan-requiring operations on the plan, and leaves the others open', async () => {
    ran.length = 0;
    const planless = await caller('none');
    await expect(pipeline.invoke('searchPeople', planless, { body: {} }, options)).rejects.toMatchObject({ code: 'plan_required' });
    expect(ran).toEqual([]);
    const credits = await pipeline.invoke('getCredits', planless, {}, options);
    expect(credits).toMatchObject({ kind: 'value', value: { plan: { name: 'none' } } });
  });

  it('settles charges through the ledger, named by the operation, and counts them on the receipt', async () => {
    const who = await caller();
    const outcome = await pipeline.invoke('searchPeople', who, { body: { limit: 4 } }, options);
    expect(outcome.kind).toBe('value');
    expect(outcome.receipt.credits).toBe(4);
    const view = (await app.services.credits.view(who.workspaceId))!;
    expect(view.movements[0]).toMatchObject({ amount: -4, operation: 'searchPeople', detail: '4 people' });
  });

  it('answers 402 insufficient_credits when the balance cannot pay, and charges nothing', async () => {
    // An active plan starts with no credits: they are bought.
    const who = await caller('active');
    const outcome = pipeline.invoke('searchPeople', who, { body: { limit: 2 } }, options);
    await expect(outcome).rejects.toMatchObject({ code: 'insufficient_credits' });
    expect((await app.services.credits.view(who.workspaceId))!.balance).toBe(0);
  });

  it('hands a stream operation back as its events; the receipt grows as pages are charged', async () => {
    const who = await caller();
    const outcome = await pipeline.invoke('streamPeople', who, { body: {} }, options);
    if (outcome.kind !== 'stream') throw new Error('expected a stream');
    expect(outcome.receipt.credits).toBe(0);
    const events = [];
    for await (const event of outcome.events) events.push(event.event);
    expect(events).toEqual(['page', 'page', 'done']);
    expect(outcome.receipt.credits).toBe(4);
  });
});
