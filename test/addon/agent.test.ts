/**
 * The sidebar's Agent tab end to end: a sheet in the fake SpreadsheetApp, the add-on's Apps Script
 * adapters, real synchronous HTTP to a real server (its own process, on the demo registry) whose
 * model, in the fake providers' process, looks up the CNPJs of the selection it is given.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProspectaClient } from '../../addon/api/client.ts';
import type { SheetPort } from '../../addon/features/ports.ts';
import { controlSocketPath, sendControl } from '../../server/cli/control.ts';
import { addonIn, type Addon } from '../helpers/addon-sandbox.ts';
import { fakeGas, type FakeGas } from '../helpers/fake-gas.ts';
import { startFakeProviderProcess, startServer, type ServerProcess } from '../helpers/processes.ts';
import { syncHttp } from '../helpers/sync-http.ts';
import { tempDir } from '../helpers/temp-dir.ts';

let server: ServerProcess;
let providers: { env: Record<string, string>; stop(): void };
let dataDir: string;
let gas: FakeGas;
/** The add-on, in an Apps Script sandbox over this test's fakes. */
let A: Addon;

async function command(name: string, args: Record<string, string>): Promise<any> {
  const reply = await sendControl(controlSocketPath(dataDir), { command: name, args });
  if (!reply.ok) throw new Error(reply.message);
  return reply.result;
}

beforeAll(async () => {
  dataDir = await tempDir('addon-agent');
  providers = await startFakeProviderProcess();
  server = await startServer({ DATA_DIR: dataDir, ...providers.env });
}, 60_000);
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  providers.stop();
});
beforeEach(async () => {
  gas = fakeGas();
  A = await addonIn(gas);
});

async function signedIn(plan: 'active' | 'none' = 'active'): Promise<ProspectaClient> {
  const { workspaceId, apiKey } = await command('workspace create', { name: 'Sheet user', plan });
  if (plan === 'active') await command('credits grant', { workspace: workspaceId, amount: '100' });
  A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
  return new ProspectaClient(syncHttp(), { baseUrl: server.url, apiKey });
}

describe('the Agent tab', () => {
  it('chats with the selected rows as data, shows each tool call with its cost, and continues the conversation', async () => {
    const client = await signedIn();
    const [company] = client.call('searchCompanies', { limit: 1 }).results;
    const before = client.call('getCredits', {}).balance;
    gas.addSheet('Contas', [
      ['Empresa', 'CNPJ', 'prospecta status'],
      ['Padaria Boa', company!.cnpj, 'done'],
      ['', '', ''],
    ]);
    gas.spreadsheet.selection = { row: 1, rows: 3 };

    const first = A.sidebarAgentChat('Are these companies active?', null, true);
    // The header row is the header, not a row; empty rows and the add-on's own column are not sent.
    expect(first.reply).toBe('Message 1 of this conversation; I saw 1 row(s) under Empresa, CNPJ.');
    expect(first.toolCalls).toEqual([
      { tool: 'get_credits', creditsCharged: 0, isError: false },
      { tool: 'lookup_cnpj_batch', creditsCharged: 1, isError: false },
    ]);
    expect(first.creditsCharged).toBe(1);
    expect(first.failedStep).toBeNull();
    expect(first.note).toBeNull();
    expect(before - client.call('getCredits', {}).balance).toBe(1);

    const second = A.sidebarAgentChat('And my balance?', first.conversationId, false);
    expect(second.conversationId).toBe(first.conversationId);
    expect(second.reply).toBe('Message 2 of this conversation; I saw no selection.');
    expect(second.toolCalls).toEqual([{ tool: 'get_credits', creditsCharged: 0, isError: false }]);
  });

  it('says in plain words when the free messages are spent, and when nothing is selected', async () => {
    await signedIn('none');
    gas.addSheet('Contas', [['Empresa'], ['Padaria Boa']]);
    gas.spreadsheet.selection = { row: 1, rows: 1 };
    expect(() => A.sidebarAgentChat('Hi', null, true)).toThrow(/Select the rows to give the agent/);
    // The server's daily allowance (AGENT_FREE_MESSAGES_PER_DAY, 20 by default), then its 402.
    for (let i = 0; i < 20; i++) A.sidebarAgentChat('Hi', null, false);
    expect(() => A.sidebarAgentChat('Hi', null, false)).toThrow(/^No active plan: /);
  });
});

describe('the selection as context', () => {
  /** A sheet of `rows` rows under `columns` labelled columns, each cell `cell` long. */
  function sheetOf(columns: number, rows: number, cell: number): SheetPort {
    const header = Array.from({ length: columns }, (_, c) => `Column ${c}`);
    return {
      name: 'Big',
      headers: () => header,
      readRows: (first, count) => Array.from({ length: Math.min(count, rows - first + 2) }, (_, r) => header.map((_, c) => `${first + r}:${c}:`.padEnd(cell, 'x'))),
    } as SheetPort;
  }

  it("is cut to the schema's limits, read from the registry, and says what was left out", () => {
    const limits = A.contextLimits();
    expect(limits).toMatchObject({ columns: 50, label: 200, rows: 200, cell: 500, chars: 50_000 });

    const wide = A.selectionContext(sheetOf(60, 300, 600), 2, 301);
    expect(JSON.stringify(wide.context).length).toBeLessThanOrEqual(limits.chars);
    expect(wide.context.header).toHaveLength(50);
    expect(wide.context.rows.every((row) => row.length === 50 && row.every((cell) => cell.length <= 500))).toBe(true);
    expect(wide.context.rows.length).toBeLessThan(200);
    expect(wide.note).toBe(`To fit what the agent takes, only the first ${wide.context.rows.length} of 300 rows were sent; only the first 50 of 60 columns; cells longer than 500 characters were cut.`);

    const small = A.selectionContext(sheetOf(3, 10, 20), 2, 11);
    expect(small.context.rows).toHaveLength(10);
    expect(small.note).toBeNull();
  });

  it('a cut selection is accepted by the server', async () => {
    const client = await signedIn();
    const { context } = A.selectionContext(sheetOf(60, 300, 600), 2, 301);
    const answer = client.call('agentChat', { message: 'What is in these rows?', context });
    expect(answer.reply).toMatch(/^Message 1 of this conversation; I saw \d+ row\(s\) under Column 0, /);
  });
});
