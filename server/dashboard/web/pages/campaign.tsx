/**
 * One campaign: its configuration and counts, and its prospects with their messages and status,
 * each editable in place and saved through updateProspect (PATCH), which records the change in
 * the prospect's history like any other client's edit.
 */
import { useMemo, useState } from 'preact/hooks';
import { headerMeaning } from '../../../../shared/column-headers.ts';
import type { OutputOf } from '../../../../shared/operations/index.ts';
import { call } from '../api.ts';
import { formatNumber, formatTime, plural } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { Loading, messageOf } from '../problem.tsx';
import { STATUS_LABELS, STATUSES, type ProspectStatus } from '../statuses.ts';

type Prospect = OutputOf<'updateProspect'>;
type Campaign = OutputOf<'getCampaign'>;

const SHOWN_AT_ONCE = 20;
const LIMITS = { connectionNote: 300, emailSubject: 300, emailBody: 5000 } as const;

/** Who the prospect is, from its source row: a name column, else first + last name, else the company, else the row. */
export function prospectName(p: Pick<Prospect, 'context' | 'rowId'>): string {
  const by: Partial<Record<string, string>> = {};
  for (const [label, value] of Object.entries(p.context)) {
    const meaning = headerMeaning(label);
    if (meaning && value.trim() && !by[meaning]) by[meaning] = value.trim();
  }
  const person = by.name ?? ([by.firstName, by.lastName].filter(Boolean).join(' ') || undefined);
  if (person && by.company) return `${person} (${by.company})`;
  return person ?? by.company ?? `Row ${p.rowId}`;
}

export function CampaignPage({ campaignId }: { campaignId: string }) {
  const campaign = useLoad(() => call('getCampaign', { campaignId }), [campaignId]);
  const [status, setStatus] = useState<ProspectStatus | ''>('');
  const [shown, setShown] = useState(SHOWN_AT_ONCE);

  return (
    <>
      <p class="breadcrumb">
        <a href="/dashboard/campaigns">All campaigns</a>
      </p>
      <Loading state={campaign.state} label="the campaign">
        {(c) => {
          const prospects = status ? c.prospects.filter((p) => p.status === status) : c.prospects;
          return (
            <>
              <h1 tabIndex={-1}>{c.name}</h1>
              <Summary campaign={c} />
              <section aria-labelledby="prospects-heading">
                <h2 id="prospects-heading">Prospects</h2>
                <div class="field inline">
                  <label for="status-filter">Show</label>
                  <select
                    id="status-filter"
                    value={status}
                    onChange={(e) => {
                      setStatus(e.currentTarget.value as ProspectStatus | '');
                      setShown(SHOWN_AT_ONCE);
                    }}
                  >
                    <option value="">Every status ({formatNumber(c.prospects.length)})</option>
                    {STATUSES.map((s) => (
                      <option key={s} value={s}>
                        {STATUS_LABELS[s]} ({formatNumber(c.prospects.filter((p) => p.status === s).length)})
                      </option>
                    ))}
                  </select>
                </div>
                {prospects.length === 0 ? (
                  <p class="muted">{c.prospects.length === 0 ? 'This campaign has no prospects yet.' : 'No prospect in this status.'}</p>
                ) : (
                  <ol class="prospects">
                    {prospects.slice(0, shown).map((p) => (
                      <li key={p.prospectId}>
                        <ProspectEditor
                          prospect={p}
                          onSaved={(saved) =>
                            campaign.set((d) => {
                              const list = d.prospects.map((x) => (x.prospectId === saved.prospectId ? saved : x));
                              const counts = { ...d.counts };
                              if (saved.status !== p.status) {
                                counts[p.status] -= 1;
                                counts[saved.status] += 1;
                              }
                              return { ...d, prospects: list, counts };
                            })
                          }
                        />
                      </li>
                    ))}
                  </ol>
                )}
                {prospects.length > shown && (
                  <button type="button" onClick={() => setShown(shown + SHOWN_AT_ONCE)}>
                    Show more ({plural(prospects.length - shown, 'more prospect')})
                  </button>
                )}
              </section>
            </>
          );
        }}
      </Loading>
    </>
  );
}

function Summary({ campaign: c }: { campaign: Campaign }) {
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Offering</dt>
          <dd>{c.offering}</dd>
        </div>
        {c.tone && (
          <div>
            <dt>Tone</dt>
            <dd>{c.tone}</dd>
          </div>
        )}
        {c.language && (
          <div>
            <dt>Language</dt>
            <dd>{c.language}</dd>
          </div>
        )}
        <div>
          <dt>Created</dt>
          <dd>{formatTime(c.createdAt)}</dd>
        </div>
      </dl>
      <ul class="counts" aria-label="Prospects by status">
        {STATUSES.map((s) => (
          <li key={s}>
            <span class="count">{formatNumber(c.counts[s])}</span> {STATUS_LABELS[s]}
          </li>
        ))}
      </ul>
    </>
  );
}

type Draft = Pick<Prospect, 'status' | 'connectionNote' | 'emailSubject' | 'emailBody'>;
const FIELDS = ['status', 'connectionNote', 'emailSubject', 'emailBody'] as const;

function ProspectEditor({ prospect, onSaved }: { prospect: Prospect; onSaved: (p: Prospect) => void }) {
  const initial = useMemo<Draft>(
    () => ({ status: prospect.status, connectionNote: prospect.connectionNote, emailSubject: prospect.emailSubject, emailBody: prospect.emailBody }),
    [prospect],
  );
  const [draft, setDraft] = useState<Draft>(initial);
  const [saving, setSaving] = useState(false);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const name = prospectName(prospect);
  const id = prospect.prospectId;
  const changed = FIELDS.filter((f) => draft[f] !== initial[f]);

  const edit = <F extends keyof Draft>(field: F, value: Draft[F]) => {
    setDraft({ ...draft, [field]: value });
    setOutcome(null);
  };

  async function save(event: Event) {
    event.preventDefault();
    if (changed.length === 0) return;
    setSaving(true);
    try {
      const body = Object.fromEntries(changed.map((f) => [f, draft[f]])) as Partial<Draft>;
      const saved = await call('updateProspect', { prospectId: id, ...body });
      onSaved(saved);
      setDraft({ status: saved.status, connectionNote: saved.connectionNote, emailSubject: saved.emailSubject, emailBody: saved.emailBody });
      setOutcome({ ok: true, text: `Saved ${formatTime(saved.updatedAt)}.` });
      announce(`${name}: saved.`);
    } catch (err) {
      setOutcome({ ok: false, text: `Not saved: ${messageOf(err)}` });
      announce(`${name}: not saved. ${messageOf(err)}`);
    } finally {
      setSaving(false);
    }
  }

  const context = Object.entries(prospect.context);
  return (
    <form class="prospect" onSubmit={save} aria-labelledby={`p-${id}`}>
      <h3 id={`p-${id}`}>{name}</h3>
      {context.length > 0 && (
        <details>
          <summary>Source row</summary>
          <dl class="context">
            {context.map(([label, value]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </details>
      )}
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
      <div class="actions">
        <button type="submit" class="primary" disabled={saving || changed.length === 0}>
          Save
        </button>
        {changed.length > 0 && (
          <button type="button" class="link-button" onClick={() => (setDraft(initial), setOutcome(null))}>
            Undo changes
          </button>
        )}
        <span class={outcome?.ok === false ? 'save-error' : 'muted'} role={outcome?.ok === false ? 'alert' : undefined}>
          {outcome?.text ?? (changed.length > 0 ? 'Unsaved changes.' : '')}
        </span>
      </div>
    </form>
  );
}
