/**
 * The Apps Script the add-on's tests run in: only Apps Script's globals, and its quotas enforced
 * by the fakes as Apps Script enforces them, in simulated time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import vm from 'node:vm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addonIn, appsScriptContext } from '../helpers/addon-sandbox.ts';
import { fakeGas, Quotas, type FakeGas } from '../helpers/fake-gas.ts';

let gas: FakeGas;
beforeEach(() => void (gas = fakeGas()));

describe('the Apps Script sandbox', () => {
  it("holds Apps Script's globals and none of Node's or the browser's", () => {
    const context = appsScriptContext(gas);
    for (const name of ['process', 'require', 'Buffer', 'setTimeout', 'setInterval', 'URL', 'TextEncoder', 'fetch', 'structuredClone', 'queueMicrotask']) {
      expect(vm.runInContext(`typeof ${name}`, context), name).toBe('undefined');
    }
    for (const name of ['SpreadsheetApp', 'PropertiesService', 'CacheService', 'UrlFetchApp', 'Utilities', 'LockService', 'ScriptApp', 'console', 'Logger', 'JSON', 'Math']) {
      expect(vm.runInContext(`typeof ${name}`, context), name).not.toBe('undefined');
    }
  });

  it('runs the bundled add-on there: its Date reads simulated time, which Utilities.sleep moves without waiting', async () => {
    const addon = await addonIn(gas);
    const before = addon.gasClock.now();
    const real = Date.now();
    gas.quotas.execute('continueJobs', () => addon.gasClock.sleep(5 * 60_000));
    expect(Date.now() - real).toBeLessThan(1000);
    expect(addon.gasClock.now() - before).toBeGreaterThanOrEqual(5 * 60_000);
  });

  it('stops an execution past 6 minutes, and a custom function past 30 seconds', () => {
    const context = appsScriptContext(gas);
    const sleep = (ms: number) => () => vm.runInContext(`Utilities.sleep(${ms})`, context);
    expect(() => gas.quotas.execute('continueJobs', sleep(Quotas.EXECUTION_MS - 1000))).not.toThrow();
    expect(() => gas.quotas.execute('continueJobs', sleep(Quotas.EXECUTION_MS + 1000))).toThrow('Exceeded maximum execution time');
    expect(() => gas.quotas.execute('PROSPECTA_CNPJ', sleep(29_000))).not.toThrow();
    expect(() => gas.quotas.execute('PROSPECTA_CNPJ', sleep(31_000))).toThrow(/Exceeded maximum execution time/);
    // The next call to any service after the limit fails too, as the execution is already over.
    expect(() =>
      gas.quotas.execute('PROSPECTA_AI', () => {
        gas.quotas.advance(31_000);
        vm.runInContext('CacheService.getUserCache().get("k")', context);
      }),
    ).toThrow(/Exceeded maximum execution time/);
  });

  it('refuses a property value over 9 KB and a cache value over 100 KB; a custom function may not write the sheet or user properties', () => {
    const context = appsScriptContext(gas);
    const run = (code: string) => () => vm.runInContext(code, context);
    expect(run(`PropertiesService.getDocumentProperties().setProperty('k', 'x'.repeat(${Quotas.PROPERTY_VALUE_BYTES}))`)).not.toThrow();
    expect(run(`PropertiesService.getDocumentProperties().setProperty('k', 'é'.repeat(${Quotas.PROPERTY_VALUE_BYTES / 2 + 1}))`)).toThrow('Argument too large: value');
    expect(run(`CacheService.getDocumentCache().put('k', 'x'.repeat(${Quotas.CACHE_VALUE_BYTES}))`)).not.toThrow();
    expect(run(`CacheService.getDocumentCache().put('k', 'x'.repeat(${Quotas.CACHE_VALUE_BYTES + 1}))`)).toThrow('Argument too large: value');
    expect(run(`CacheService.getDocumentCache().put('k'.repeat(251), 'x')`)).toThrow('Argument too large: key');

    gas.addSheet('Sheet1', [['a']]);
    expect(() => gas.quotas.execute('PROSPECTA_CNPJ', run(`SpreadsheetApp.getActiveSheet().getRange(1, 1).setValue('b')`))).toThrow('You do not have permission to call setValues');
    expect(() => gas.quotas.execute('PROSPECTA_CNPJ', run(`PropertiesService.getUserProperties().setProperty('k', 'v')`))).toThrow('You do not have permission to call setProperty');
    expect(gas.quotas.execute('PROSPECTA_CNPJ', run(`CacheService.getUserCache().put('k', 'v'); CacheService.getUserCache().get('k')`))).toBe('v');
  });

  it('expires cache values in simulated time, 6 hours at most', () => {
    const cache = gas.userCache;
    cache.put('a', '1', 60);
    cache.put('b', '2', 100_000);
    gas.quotas.advance(61_000);
    expect(cache.get('a')).toBeNull();
    expect(cache.get('b')).toBe('2');
    gas.quotas.advance(Quotas.CACHE_MAX_SECONDS * 1000);
    expect(cache.get('b')).toBeNull();
  });

  describe('a fetch over 50 MB', () => {
    let child: ChildProcess | undefined;
    afterEach(() => void child?.kill());

    it('fails as UrlFetchApp does', async () => {
      // In a process of its own: this thread is blocked while UrlFetchApp's synchronous call runs.
      const script = `const body = 'x'.repeat(${Quotas.FETCH_BYTES + 1}); const s = require('node:http').createServer((q, r) => r.end(body)).listen(0, '127.0.0.1', () => console.log(s.address().port));`;
      child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const [port] = (await once(child.stdout!, 'data')) as [Buffer];
      const context = appsScriptContext(gas);
      const url = `http://127.0.0.1:${String(port).trim()}/big`;
      expect(() => vm.runInContext(`UrlFetchApp.fetch(${JSON.stringify(url)}, { muteHttpExceptions: true })`, context)).toThrow('Response too large');
    });
  });
});
