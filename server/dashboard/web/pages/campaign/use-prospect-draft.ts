/**
 * A prospect's edits before they are saved: the draft, which fields differ from what the server
 * has, Undo, and Save, which sends only those fields through updateProspect (PATCH).
 */
import { useMemo, useState } from 'preact/hooks';
import { call } from '../../api.ts';
import { messageOf } from '../../components/problem.tsx';
import { formatTime } from '../../format.ts';
import { announce } from '../../live.ts';
import { prospectName, type Prospect } from './prospect-name.ts';

export type Draft = Pick<Prospect, 'status' | 'connectionNote' | 'emailSubject' | 'emailBody'>;
const FIELDS = ['status', 'connectionNote', 'emailSubject', 'emailBody'] as const;

const draftOf = (p: Draft): Draft => ({ status: p.status, connectionNote: p.connectionNote, emailSubject: p.emailSubject, emailBody: p.emailBody });

export function useProspectDraft(prospect: Prospect, onSaved: (p: Prospect) => void) {
  const initial = useMemo<Draft>(() => draftOf(prospect), [prospect]);
  const [draft, setDraft] = useState<Draft>(initial);
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const changed = FIELDS.filter((f) => draft[f] !== initial[f]);

  const edit = <F extends keyof Draft>(field: F, value: Draft[F]) => {
    setDraft({ ...draft, [field]: value });
    setOutcome(null);
  };

  async function save(event: Event) {
    event.preventDefault();
    if (changed.length === 0) return;
    const name = prospectName(prospect);
    setSaving(true);
    try {
      const body = Object.fromEntries(changed.map((f) => [f, draft[f]])) as Partial<Draft>;
      const saved = await call('updateProspect', { prospectId: prospect.prospectId, ...body });
      onSaved(saved);
      setDraft(draftOf(saved));
      setOutcome({ ok: true, text: `Saved ${formatTime(saved.updatedAt)}.` });
      announce(`${name}: saved.`);
    } catch (err) {
      setOutcome({ ok: false, text: `Not saved: ${messageOf(err)}` });
      announce(`${name}: not saved. ${messageOf(err)}`);
    } finally {
      setSaving(false);
    }
  }

  function undo() {
    setDraft(initial);
    setOutcome(null);
  }

  return { draft, changed, saving, outcome, edit, save, undo };
}
