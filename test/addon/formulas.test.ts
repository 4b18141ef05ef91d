/**
 * The custom functions as Sheets runs them (each call one custom-function execution in the Apps
 * Script sandbox: 30 seconds, no writes to the sheet or the user's properties), against a real
 * server: a recalculation never pays twice, safe mode spends nothing, "Refresh selected" buys.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProspectaClient } from '../../addon/api/client.ts';
import { NOT_PAID_YET } from '../../addon/features/formulas.ts';
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
let A: Addon;

async function command(name: string, args: Record<string, string>): Promise<any> {
  const reply = await sendControl(controlSocketPath(dataDir), { command: name, args });
  if (!reply.ok) throw new Error(reply.message);
  return reply.result;
}

beforeAll(async () => {
  dataDir = await tempDir('addon-formulas');
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

/** A workspace with credits, its key in the user's settings; a client of the test's own to look. */
async function signedIn(): Promise<ProspectaClient> {
  const { workspaceId, apiKey } = await command('workspace create', { name: 'Formulas', plan: 'active' });
  await command('credits grant', { workspace: workspaceId, amount: '100' });
  A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
  return new ProspectaClient(syncHttp(), { baseUrl: server.url, apiKey });
}

const balance = (client: ProspectaClient) => client.call('getCredits', {}).balance;

describe('=PROSPECTA_CNPJ in safe mode (the default)', () => {
  it('spends nothing until "Refresh selected", which buys each input once; recalculation is then served from the document', async () => {
    const client = await signedIn();
    const [company] = client.call('searchCompanies', { limit: 1 }).results;
    const cnpj = company!.cnpj;
    const sheet = gas.addSheet('Clientes', [['CNPJ', 'Razão social', 'Cidade'], [cnpj, '', '']]);
    sheet.getRange('B2').setFormula('=PROSPECTA_CNPJ(A2)');
    sheet.getRange('C2').setFormula('=PROSPECTA_CNPJ($A$2; "city")');
    const before = balance(client);

    expect(A.sidebarState().safeMode).toBe(true);
    const calls = gas.http.calls;
    expect(() => A.PROSPECTA_CNPJ(cnpj)).toThrow(NOT_PAID_YET);
    expect(gas.http.calls).toBe(calls);

    gas.spreadsheet.selection = { row: 2, rows: 1, column: 2, columns: 2 };
    expect(A.sidebarRefreshSelected()).toBe('2 formula(s) refreshed; 1 bought, the rest already paid for.');
    expect(balance(client)).toBe(before - 1);
    // Written again so Sheets recalculates them.
    expect(sheet.recalculations).toBe(4);
    expect(sheet.getRange('B2:C2').getFormulas()).toEqual([['=PROSPECTA_CNPJ(A2)', '=PROSPECTA_CNPJ($A$2; "city")']]);

    const served = gas.http.calls;
    expect(A.PROSPECTA_CNPJ(cnpj)).toBe(company!.name);
    expect(A.PROSPECTA_CNPJ(cnpj.replace(/^(.{2})(.{3})(.{3})(.{4})(.{2})$/, '$1.$2.$3/$4-$5'), 'Cidade/UF')).toBe([company!.address.city, company!.address.state].filter(Boolean).join('/'));
    // A column of them is one execution and one grid.
    expect(A.PROSPECTA_CNPJ([[cnpj], [''], ['123']], 'city')).toEqual([[[company!.address.city, company!.address.state].filter(Boolean).join('/')], [''], ['✗ "123" is not a CNPJ: check it.']]);
    // The cache forgets after 6 hours; the document's properties still hold the answer.
    gas.documentCache.data.clear();
    const fresh = await addonIn(gas);
    expect(fresh.PROSPECTA_CNPJ(cnpj)).toBe(company!.name);
    expect(gas.http.calls).toBe(served);
    expect(balance(client)).toBe(before - 1);
  });

  it('says in a short cell error what is wrong and what to do', async () => {
    gas.addSheet('Sheet1', []);
    expect(() => A.PROSPECTA_CNPJ('12.345')).toThrow('"12.345" is not a CNPJ: check it.');
    expect(() => A.PROSPECTA_CNPJ('11222333000181', 'shoe size')).toThrow(/^Unknown field "shoe size": use name, tradeName/);
    expect(A.PROSPECTA_CNPJ('')).toBe('');
    A.sidebarSetSafeMode(false);
    expect(() => A.PROSPECTA_CNPJ('11222333000181')).toThrow('No API key: open prospecta Settings.');
    gas.spreadsheet.selection = null;
    expect(() => A.sidebarRefreshSelected()).toThrow(/Select the cells/);
  });
});

describe('formulas with safe mode off', () => {
  it('buy once; a recalculation that lost every copy is replayed by the server under the same Idempotency-Key, not charged', async () => {
    const client = await signedIn();
    gas.addSheet('Sheet1', []);
    expect(A.sidebarSetSafeMode(false).safeMode).toBe(false);
    const [company] = client.call('searchCompanies', { limit: 1 }).results;
    const before = balance(client);
    const name = A.PROSPECTA_CNPJ(company!.cnpj);
    expect(name).toBe(company!.name);
    expect(balance(client)).toBe(before - 1);

    const ai = A.PROSPECTA_AI('industry in two words', company!.name, [[company!.cnpj, '']]);
    expect(typeof ai).toBe('string');
    const afterAi = balance(client);
    expect(afterAi).toBe(before - 2);
    const calls = gas.http.calls;
    expect(A.PROSPECTA_AI('industry in two words', company!.name, [[company!.cnpj, '']])).toBe(ai);
    expect(gas.http.calls).toBe(calls);

    // Cache and properties lost (another document, a cleared sheet): the server replays.
    gas.documentCache.data.clear();
    gas.documentProperties.data.clear();
    expect(A.PROSPECTA_CNPJ(company!.cnpj)).toBe(company!.name);
    expect(A.PROSPECTA_AI('industry in two words', company!.name, [[company!.cnpj, '']])).toBe(ai);
    expect(gas.http.calls).toBe(calls + 2);
    expect(balance(client)).toBe(afterAi);
  });

  it('enrich: one charge for one identifier and field, served again after', async () => {
    const client = await signedIn();
    gas.addSheet('Sheet1', []);
    A.sidebarSetSafeMode(false);
    const before = balance(client);
    const first = A.PROSPECTA_ENRICH('acme.com.br', 'companyName');
    const spent = before - balance(client);
    const calls = gas.http.calls;
    expect(A.PROSPECTA_ENRICH('https://www.acme.com.br/', 'Company')).toBe(first);
    expect(gas.http.calls).toBe(calls);
    expect(before - balance(client)).toBe(spent);
  });
});
