/// <reference types="google-apps-script" />
/** Clock, lock and triggers from Apps Script. */
import type { Clock, LockPort, TriggerPort } from '../features/ports.ts';

export const gasClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => Utilities.sleep(ms),
};

export function documentLock(): LockPort {
  const lock = LockService.getDocumentLock();
  return { tryLock: (ms) => lock.tryLock(ms), release: () => lock.releaseLock() };
}

export const gasTriggers: TriggerPort = {
  continueLater(handler) {
    ScriptApp.newTrigger(handler).timeBased().after(60_000).create();
  },
  clear(handler) {
    for (const trigger of ScriptApp.getProjectTriggers()) {
      if (trigger.getHandlerFunction() === handler) ScriptApp.deleteTrigger(trigger);
    }
  },
};

/** SHA-256 of a text, in hex: Apps Script has no Web Crypto, but Utilities computes digests. */
export function sha256(text: string): string {
  const bytes = Utilities.computeDigest(Utilities.DigestAlgorithm.SHA_256, text, Utilities.Charset.UTF_8);
  return bytes.map((b) => ((b + 256) % 256).toString(16).padStart(2, '0')).join('');
}
