/**
 * The add-on's Changes tab end to end: a sheet of CNPJs in the fake SpreadsheetApp, the add-on in
 * its Apps Script sandbox, real synchronous HTTP to a real server process that imported a pair of
 * releases holding one establishment per kind of change (the server's own change tests use them).
 * The store does not matter here (the feed's tests run on both): the embedded one.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { controlSocketPath, sendControl } from '../../server/cli/control.ts';
import { addonIn, type Addon } from '../helpers/addon-sandbox.ts';
import { makeCnpj } from '../helpers/companies.ts';
import { fakeGas, type FakeGas } from '../helpers/fake-gas.ts';
import { commandHere } from '../helpers/commands.ts';
import { startServer, type ServerProcess } from '../helpers/processes.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { cnpj, writeReleasePair } from '../server/companies/change-releases.ts';

let server: ServerProcess;
let dataDir: string;
let gas: FakeGas;
let A: Addon;

async function workspace(credits: number): Promise<string> {
  const reply = await sendControl(controlSocketPath(dataDir), { command: 'workspace create', args: { name: 'Carteira', plan: 'active' } });
  if (!reply.ok) throw new Error(reply.message);
  const { workspaceId, apiKey } = reply.result as { workspaceId: string; apiKey: string };
  if (credits > 0) await sendControl(controlSocketPath(dataDir), { command: 'credits grant', args: { workspace: workspaceId, amount: String(credits) } });
  return apiKey;
}

async function consumed(apiKey: string): Promise<number> {
  const credits = (await fetch(`${server.url}/v1/api/credits`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())) as { consumed: number };
  return credits.consumed;
}

beforeAll(async () => {
  dataDir = await tempDir('addon-changes');
  const { first, second } = await writeReleasePair(await tempDir('addon-changes-releases'));
  for (const dir of [first, second]) expect(await commandHere({ DATA_DIR: dataDir }, 'import cnpj', { dir })).toMatchObject({ complete: true });
  server = await startServer({ DATA_DIR: dataDir });
}, 60_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
});

beforeEach(async () => {
  gas = fakeGas();
  A = await addonIn(gas);
});

/** A customer sheet whose CNPJ column holds `cnpjs`, all of it selected. */
function customers(cnpjs: string[], name = 'Clientes') {
  const sheet = gas.addSheet(name, [['Cliente', 'CNPJ'], ...cnpjs.map((c, i) => [`Cliente ${i + 1}`, c])]);
  gas.spreadsheet.selection = { row: 2, rows: cnpjs.length };
  return sheet;
}

const lines = (sheet: ReturnType<typeof customers>) => sheet.column('Registry changes');
const statuses = (sheet: ReturnType<typeof customers>) => sheet.column('prospecta status');

describe('the Changes tab', () => {
  it('writes one line per row saying what changed in the latest release, charged per change; marks what it could not check', async () => {
    const apiKey = await workspace(100);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    const wrongDigits = cnpj.same.slice(0, 12) + String((Number(cnpj.same.slice(12)) + 1) % 100).padStart(2, '0');
    const sheet = customers([cnpj.closed, cnpj.renamedBranch, cnpj.moved, cnpj.partners, cnpj.removed, cnpj.same, '', 'abc', wrongDigits, cnpj.closed.replace(/^(.{2})(.{3})(.{3})(.{4})(.{2})$/, '$1.$2.$3/$4-$5')]);
    expect(A.sidebarChanges({}, false)).toBe('Done: 6 changed, 1 unchanged, 2 not checked, 1 without a CNPJ; 11 credits. See the "Registry changes" column.');
    const [closed, renamed, moved, partners, removed, same, , , , closedAgain] = lines(sheet);
    expect(closed).toBe('status: ATIVA → BAIXADA (2026-11)');
    expect(closedAgain).toBe(closed);
    for (const part of ['name: VELHO NOME LTDA → NOVO NOME LTDA (2026-11)', 'capital: 1000 → 5000 (2026-11)', 'legalNature: 2062 Sociedade Empresária Limitada → 2305']) expect(renamed).toContain(part);
    for (const part of ['address: ', 'RUA VELHA', 'AVENIDA NOVA', 'contact: ', 'activity: 6201501 Desenvolvimento de programas de computador sob encomenda → 5611201 Restaurantes e similares (2026-11)']) expect(moved).toContain(part);
    expect(partners).toContain('partners: +CARLA CHEGA, −ANA VELHA (2026-11)');
    expect(removed).toBe('removed (2026-11)');
    expect(same).toBe('no change in the latest release');
    expect(statuses(sheet)).toEqual([
      '✓ 1 change · 1 credit',
      '✓ 4 changes · 4 credits',
      '✓ 3 changes · 3 credits',
      '✓ 2 changes · 2 credits',
      '✓ 1 change · 1 credit',
      '✓ no change · 0 credits',
      '– no CNPJ',
      '✗ not a CNPJ',
      '✗ invalid check digits',
      '✓ 1 change · 1 credit',
    ]);
    // Each CNPJ is asked once, however many rows hold it.
    expect(await consumed(apiKey)).toBe(1 + 4 + 3 + 2 + 1);
  });

  it('sends more CNPJs than one request takes in batches of 500, together; since a release, or a release never imported refused by name', async () => {
    const apiKey = await workspace(100);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    // 600 customers the registry never changed, then one that closed.
    const quiet = Array.from({ length: 600 }, (_, i) => makeCnpj(String(90_000_000 + i)));
    const sheet = customers([...quiet, cnpj.closed]);
    const calls = gas.http.calls;
    expect(A.sidebarChanges({ since: '2026-10' }, false)).toMatch(/^Done: 1 changed, 600 unchanged, 0 not checked, 0 without a CNPJ; 1 credit\./);
    // Two batches, in one fetchAll.
    expect(gas.http.calls - calls).toBe(1);
    expect(lines(sheet).at(-1)).toBe('status: ATIVA → BAIXADA (2026-11)');
    expect(lines(sheet)[0]).toBe('no change since 2026-10');
    // Refused before anything was answered: said in the tab, the sheet left as it was.
    expect(() => A.sidebarChanges({ since: '2025-01' }, true)).toThrow(/2025-01.*2026-10/);
    expect(lines(sheet)[0]).toBe('no change since 2026-10');
    expect(await consumed(apiKey)).toBe(1);
  });

  it('stops when the credits run out: the rows answered are written, the others say why; refused at once, the sheet is left as it was', async () => {
    const apiKey = await workspace(0);
    A.saveSettings(A.userProperties(), { apiKey, serverUrl: server.url });
    // The first batch has nothing to pay for; the second has changes, and no credits to pay them.
    const quiet = Array.from({ length: 500 }, (_, i) => makeCnpj(String(80_000_000 + i)));
    const sheet = customers([...quiet, cnpj.closed, cnpj.moved]);
    expect(A.sidebarChanges({}, false)).toMatch(/^Stopped: Not enough credits.*\(0 changed, 500 unchanged, 2 not checked, 0 without a CNPJ; 0 credits\)\.$/);
    expect(statuses(sheet).slice(-3)).toEqual(['✓ no change · 0 credits', expect.stringMatching(/^✗ Not enough credits/), expect.stringMatching(/^✗ Not enough credits/)]);
    expect(lines(sheet).slice(-2)).toEqual(['', '']);

    const other = customers([cnpj.closed, cnpj.moved, cnpj.partners, cnpj.removed, cnpj.same, cnpj.renamed], 'Outros');
    gas.spreadsheet.active = other;
    expect(() => A.sidebarChanges({}, true)).toThrow(/^Not enough credits/);
    expect(other.table()[0]).toEqual(['Cliente', 'CNPJ']);
    expect(await consumed(apiKey)).toBe(0);
  });
});
