/** One key in the table: its name (which its Revoke button is described by), first characters, dates and status. */
import type { Out } from '../../api.ts';
import { Badge } from '../../components/badge.tsx';
import { formatTime } from '../../format.ts';

export type Key = Out<'listApiKeys'>['keys'][number];

export function KeyRow({ apiKey: key, onRevoke }: { apiKey: Key; onRevoke: (button: HTMLButtonElement) => void }) {
  return (
    <tr class={key.revokedAt ? 'revoked' : undefined}>
      <th scope="row" id={`key-${key.keyId}`}>
        {key.name}
      </th>
      <td>
        <code>{key.hint}</code>
      </td>
      <td class="nowrap">{formatTime(key.createdAt)}</td>
      <td class="nowrap">{key.lastUsedAt ? formatTime(key.lastUsedAt) : 'Never'}</td>
      <td>{key.revokedAt ? <Badge kind="revoked">Revoked {formatTime(key.revokedAt)}</Badge> : <Badge kind="active">Active</Badge>}</td>
      <td>
        {!key.revokedAt && (
          <button type="button" class="danger" aria-describedby={`key-${key.keyId}`} onClick={(e) => onRevoke(e.currentTarget)}>
            Revoke
          </button>
        )}
      </td>
    </tr>
  );
}
