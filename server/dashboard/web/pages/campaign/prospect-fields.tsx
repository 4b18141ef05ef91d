/** A prospect's editable fields: its status and its three messages, each held to the length the server accepts. */
import { STATUS_LABELS, STATUSES, type ProspectStatus } from '../../statuses.ts';
import type { Draft } from './use-prospect-draft.ts';

const LIMITS = { connectionNote: 300, emailSubject: 300, emailBody: 5000 } as const;

export function ProspectFields({ id, draft, edit }: { id: string; draft: Draft; edit: <F extends keyof Draft>(field: F, value: Draft[F]) => void }) {
  return (
    <>
      <div class="field">
        <label for={`status-${id}`}>Status</label>
        <select id={`status-${id}`} value={draft.status} onChange={(e) => edit('status', e.currentTarget.value as ProspectStatus)}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABELS[s]}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`note-${id}`}>Connection note</label>
        <textarea
          id={`note-${id}`}
          rows={3}
          maxLength={LIMITS.connectionNote}
          value={draft.connectionNote}
          onInput={(e) => edit('connectionNote', e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`subject-${id}`}>Email subject</label>
        <input
          id={`subject-${id}`}
          type="text"
          maxLength={LIMITS.emailSubject}
          value={draft.emailSubject}
          onInput={(e) => edit('emailSubject', e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for={`body-${id}`}>Email body</label>
        <textarea id={`body-${id}`} rows={8} maxLength={LIMITS.emailBody} value={draft.emailBody} onInput={(e) => edit('emailBody', e.currentTarget.value)} />
      </div>
    </>
  );
}
