/**
 * Revoking a key once its dialog is confirmed: what came of it for the page and screen readers.
 * A key another tab (or the CLI) revoked first counts as revoked, not as a failure.
 */
import { useState } from 'preact/hooks';
import { ApiError, call } from '../../api.ts';
import type { Outcome } from '../../components/outcome.tsx';
import { messageOf } from '../../components/problem.tsx';
import { announce } from '../../live.ts';
import type { Key } from './key-row.tsx';

export function useRevoke(onRevoked: (keyId: string, revokedAt: string) => void) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  async function revoke(key: Key) {
    setBusy(true);
    try {
      const done = await call('revokeApiKey', { keyId: key.keyId });
      onRevoked(key.keyId, done.revokedAt);
      setOutcome({ kind: 'info', text: `Key “${key.name}” revoked. Requests with it are refused from now on.` });
      announce(`Key “${key.name}” revoked.`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'already_revoked') {
        onRevoked(key.keyId, new Date().toISOString());
        setOutcome({ kind: 'info', text: `Key “${key.name}” was already revoked (in another tab or from the command line).` });
        announce(`Key “${key.name}” was already revoked.`);
      } else {
        setOutcome({ kind: 'error', text: `Key “${key.name}” was not revoked: ${messageOf(err)}` });
        announce(`The key was not revoked: ${messageOf(err)}`);
      }
    } finally {
      setBusy(false);
    }
  }

  return { busy, outcome, clear: () => setOutcome(null), revoke };
}
