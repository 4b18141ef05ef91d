import { readFile } from 'node:fs/promises';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { buildAddon, whitelistEntry } from '../../addon/build.mjs';
import { operations } from '../../shared/operations/index.ts';

describe('addon build', () => {
  it('bundles one Code.js whose top-level functions Apps Script can call, with the manifest', async () => {
    const { exports } = await buildAddon({ serverUrl: 'https://prospecta.test' });
    expect(exports.sort()).toEqual([
      'PROSPECTA_AI',
      'PROSPECTA_CNPJ',
      'PROSPECTA_ENRICH',
      'cancelRuns',
      'continueJobs',
      'createCampaignFromSelection',
      'enrichSelection',
      'fillCnpj',
      'onInstall',
      'onOpen',
      'refreshProspectsTab',
      'showSettings',
      'showSidebar',
      'sidebarAgentChat',
      'sidebarCancelRun',
      'sidebarChanges',
      'sidebarCreateCampaign',
      'sidebarExport',
      'sidebarExportStatus',
      'sidebarJobs',
      'sidebarRefreshSelected',
      'sidebarSaveSettings',
      'sidebarSearch',
      'sidebarSetMaxAge',
      'sidebarSetSafeMode',
      'sidebarStart',
      'sidebarState',
      'syncProspectEdits',
      'testConnection',
    ]);
    const code = await readFile(new URL('../../addon/dist/Code.js', import.meta.url), 'utf8');
    const menu: string[] = [];
    const ui = {
      createAddonMenu: () => ({
        addItem(label: string, fn: string) {
          menu.push(`${label}:${fn}`);
          return this;
        },
        addSeparator() {
          return this;
        },
        addToUi() {},
      }),
    };
    const context = vm.createContext({ SpreadsheetApp: { getUi: () => ui } });
    vm.runInContext(code, context);
    vm.runInContext('onOpen()', context);
    expect(menu).toEqual([
      'Open prospecta:showSidebar',
      'Enrich selected rows:enrichSelection',
      'Fill CNPJ data for selected rows:fillCnpj',
      'Cancel runs in progress:cancelRuns',
      'Create campaign from selected rows…:createCampaignFromSelection',
      'Refresh prospects:refreshProspectsTab',
      'Sync prospect edits:syncProspectEdits',
      'Settings…:showSettings',
      'Test connection:testConnection',
    ]);
    for (const name of exports) expect(typeof context[name]).toBe('function');

    // The manifest fixes the server, so Settings asks only for the key and stores no address.
    const prompts: string[] = [];
    const stored = new Map<string, string>();
    const props = { getProperty: (k: string) => stored.get(k) ?? null, setProperty: (k: string, v: string) => void stored.set(k, v) };
    Object.assign(ui, {
      prompt: (title: string) => (prompts.push(title), { getSelectedButton: () => 'OK', getResponseText: () => `service_live_${'a'.repeat(40)}` }),
      alert: () => undefined,
      ButtonSet: { OK: 'OK', OK_CANCEL: 'OK_CANCEL' },
      Button: { OK: 'OK' },
    });
    Object.assign(context, {
      PropertiesService: { getUserProperties: () => props },
      UrlFetchApp: { fetch: (url: string) => { throw new Error(`fetched ${url}`); } },
    });
    vm.runInContext('showSettings()', context);
    expect(prompts).toEqual(['prospecta: API key']);
    expect([...stored.keys()]).toEqual(['prospecta.apiKey']);

    // Sheets offers a custom function (and its autocomplete) from the top-level function's JSDoc.
    for (const [name, params] of [['PROSPECTA_CNPJ', 'cnpj, field'], ['PROSPECTA_ENRICH', 'identifier, field'], ['PROSPECTA_AI', 'instruction, context']]) {
      expect(code).toMatch(new RegExp(`\\* @customfunction\\s*\\*/\\nfunction ${name}\\(${params}\\) \\{`));
    }
    expect(code).not.toMatch(/@customfunction\s*\*\/\nfunction (?!PROSPECTA_)/);

    const manifest = JSON.parse(await readFile(new URL('../../addon/dist/appsscript.json', import.meta.url), 'utf8'));
    expect(manifest.oauthScopes).toContain('https://www.googleapis.com/auth/spreadsheets.currentonly');
    expect(manifest.oauthScopes).not.toContain('https://www.googleapis.com/auth/spreadsheets');
    expect(manifest.urlFetchWhitelist).toEqual(['https://prospecta.test/']);
  });

  it('keeps Code.js lean: the registry as plain data, no TypeBox or schemas, at most 80 KB', async () => {
    await buildAddon({ serverUrl: 'https://prospecta.test' });
    const code = await readFile(new URL('../../addon/dist/Code.js', import.meta.url), 'utf8');
    // Every Apps Script execution (a menu click, a trigger, each custom function) evaluates it whole.
    expect(Buffer.byteLength(code)).toBeLessThanOrEqual(80 * 1024);
    expect(code).not.toMatch(/TypeBox|sinclair/);
    // The facts it does carry are the registry's own: a path, a limit and a price.
    expect(code).toContain(`path:"${operations.lookupCnpjBatch.path}"`);
  });

  it('whitelists the server named, https only, and has no default to fall back on', () => {
    expect(whitelistEntry('https://prospecta.acme.com.br')).toBe('https://prospecta.acme.com.br/');
    expect(whitelistEntry('https://acme.com.br/prospecta//')).toBe('https://acme.com.br/prospecta/');
    expect(() => whitelistEntry(undefined)).toThrow(/Set ADDON_SERVER_URL to your prospecta server's https address/);
    expect(() => whitelistEntry('http://prospecta.acme.com.br')).toThrow(/must start with https:\/\//);
    expect(() => whitelistEntry('prospecta.acme.com.br')).toThrow(/not a URL/);
  });
});
