/** The workspace's keys, newest first, each revocable after a confirmation; what the revocation did above them. */
import { ConfirmDialog, useConfirmation } from '../../components/confirm-dialog.tsx';
import { OutcomeNotice } from '../../components/outcome.tsx';
import { HeaderRow, ScrollingTable } from '../../components/table.tsx';
import { KeyRow, type Key } from './key-row.tsx';
import { useRevoke } from './use-revoke.ts';

export function KeyTable({ keys, onRevoked }: { keys: Key[]; onRevoked: (keyId: string, revokedAt: string) => void }) {
  const confirmation = useConfirmation<Key>(() => document.getElementById('keys-heading'));
  const revocation = useRevoke(onRevoked);

  if (keys.length === 0) return <p class="muted">No keys yet. Create one above.</p>;

  return (
    <>
      <OutcomeNotice outcome={revocation.outcome} />
      <ScrollingTable label="Table of keys" class="keys">
        <HeaderRow columns={['Name', 'First characters', 'Created', 'Last used', 'Status']} actions />
        <tbody>
          {keys.map((key) => (
            <KeyRow
              key={key.keyId}
              apiKey={key}
              onRevoke={(button) => {
                revocation.clear();
                confirmation.ask(key, button);
              }}
            />
          ))}
        </tbody>
      </ScrollingTable>
      <ConfirmDialog id="revoke" confirmation={confirmation} title={<>Revoke “{confirmation.target?.name}”?</>} busy={revocation.busy} onConfirm={revocation.revoke}>
        Programs using this key are refused at once (401). This cannot be undone.
      </ConfirmDialog>
    </>
  );
}
