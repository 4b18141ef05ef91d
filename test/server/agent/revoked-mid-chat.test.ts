/**
 * A chat with the agent runs for as long as its model and tools take, every paid tool call charged
 * to the credential that sent the message. A credential revoked meanwhile (here by `prospecta key
 * revoke`, a real CLI process reaching the real server) must stop that work as it stops a job's:
 * no tool call, and no model call, after the revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.ts';
import { scripted, startFakeLlm, type ChatBody, type FakeLlm } from '../../helpers/fake-llm.ts';
import { latch } from '../../helpers/latch.ts';
import { runCli, startServer, type ServerProcess } from '../../helpers/processes.ts';
import { readEvents } from '../../helpers/sse.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

let llm: FakeLlm;
let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  llm = await startFakeLlm(() => 'unused');
  env = { DATA_DIR: await tempDir('agent-revoked'), LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: llm.key, LLM_MODEL: 'fake-model' };
  server = await startServer(env);
}, 60_000);
afterAll(async () => {
  await llm?.close();
});

const api = (key: string, path: string, body?: unknown) =>
  fetch(`${server.url}/v1/api${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function cli(...args: string[]): Promise<any> {
  const result = await runCli(args, env);
  expect(result.code, result.stderr).toBe(0);
  return result.json;
}

describe('a key revoked by the CLI while a chat runs', () => {
  it('stops the chat: the tool call the model asks for next is not run, nothing more is charged, no further model call', { timeout: 60_000 }, async () => {
    const demoKey = /(service_live_\w+)/.exec(server.stderr())![1]!;
    const company = ((await (await api(demoKey, '/companies/search', { limit: 1 })).json()) as { results: Array<{ cnpj: string }> }).results[0]!;
    const { workspaceId, apiKey } = await cli('workspace', 'create', '--name', 'Chat', '--plan', 'active');
    await cli('credits', 'grant', '--workspace', workspaceId, '--amount', '10');
    const { keyId } = (await cli('key', 'list', '--workspace', workspaceId)).keys[0];

    // Turn 1 looks the company up; turn 2, held until the key is revoked, asks for it again.
    const lookUp = { calls: [{ name: 'lookup_cnpj_batch', arguments: { cnpjs: [company.cnpj] } }] };
    const play = scripted([lookUp, lookUp, { text: 'Done.' }]);
    const revoked = latch();
    llm.respond = (body: ChatBody) => {
      if (llm.requests.length === 1) llm.next({ until: revoked.promise });
      return play(body);
    };

    const chat = api(apiKey, '/agent/chat', { message: `Look ${company.cnpj} up, twice` });
    await eventually(() => llm.requests.length === 2, { message: 'the second model call' });
    await cli('key', 'revoke', '--workspace', workspaceId, '--key', keyId);
    revoked.open();

    const res = await chat;
    expect(res.status).toBe(200);
    const events = await readEvents(res);
    const results = events.filter((e) => e.event === 'tool_result').map((e) => e.data as { isError: boolean; creditsCharged: number });
    expect(results).toEqual([expect.objectContaining({ isError: false, creditsCharged: 1 })]);
    expect(events.find((e) => e.event === 'error')?.data).toMatchObject({ error: 'unauthorized', message: expect.stringMatching(/revoked/) });
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { creditsCharged: 1 } });
    // No third model call: the chat ended with the credential.
    expect(llm.requests).toHaveLength(2);

    const workspaces = (await cli('workspace', 'list')).workspaces as Array<{ workspaceId: string; balance: number }>;
    expect(workspaces.find((w) => w.workspaceId === workspaceId)!.balance).toBe(9);
  });
});
