/**
 * The add-on as Apps Script runs it: bundled like Code.js and evaluated in a vm context that holds
 * only Apps Script's globals (the fakes of fake-gas.ts, with console and Logger), so a Node API
 * used by mistake (process, require, Buffer, setTimeout, URL, TextEncoder…) fails here as it
 * would there. Each call from the test into the add-on is one execution, held to its quota in
 * simulated time; the context's Date reads that time.
 */
import vm from 'node:vm';
import { bundleScript } from '../../addon/build.mjs';
import type * as Surface from './addon-surface.ts';
import type { FakeGas } from './fake-gas.ts';

export type Addon = typeof Surface;

let bundled: ReturnType<typeof bundleScript> | undefined;

/** Date as the sandbox sees it: simulated time for `new Date()` and `Date.now()`. */
const SIMULATED_DATE = `(() => {
  const now = globalThis.__simulatedNow;
  delete globalThis.__simulatedNow;
  const RealDate = Date;
  class AppsScriptDate extends RealDate {
    constructor(...args) { super(...(args.length ? args : [now()])); }
    static now() { return now(); }
  }
  globalThis.Date = AppsScriptDate;
})();`;

/** A fresh Apps Script global over `gas`'s fakes, and nothing else. */
export function appsScriptContext(gas: FakeGas): vm.Context {
  const context = vm.createContext({ ...gas.globals, __simulatedNow: () => gas.quotas.now() });
  vm.runInContext(SIMULATED_DATE, context);
  return context;
}

/** The add-on in a fresh Apps Script global over `gas`'s fakes; each top-level call is an execution. */
export async function addonIn(gas: FakeGas): Promise<Addon> {
  bundled ??= bundleScript('test/helpers/addon-surface.ts');
  const { code, global } = await bundled;
  const context = appsScriptContext(gas);
  vm.runInContext(code, context, { filename: 'Code.js' });
  const surface = context[global] as Record<string, unknown>;
  return new Proxy(surface, {
    get(target, name: string) {
      const value = target[name];
      if (typeof value !== 'function') return value;
      return new Proxy(value, { apply: (fn, self, args) => gas.quotas.execute(name, () => Reflect.apply(fn, self, args)) });
    },
  }) as unknown as Addon;
}
