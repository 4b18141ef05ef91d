/** A campaign's prospects, filtered by status, 20 at a time ("Show more"), each editable in place. */
import { useState } from 'preact/hooks';
import type { Out } from '../../api.ts';
import { InlineSelect } from '../../components/select-field.tsx';
import { formatNumber, plural } from '../../format.ts';
import { STATUS_LABELS, STATUSES, type ProspectStatus } from '../../statuses.ts';
import { ProspectEditor } from './prospect-editor.tsx';
import type { Prospect } from './prospect-name.ts';

const SHOWN_AT_ONCE = 20;

export function ProspectList({ campaign: c, onSaved }: { campaign: Out<'getCampaign'>; onSaved: (before: Prospect, saved: Prospect) => void }) {
  const [status, setStatus] = useState<ProspectStatus | ''>('');
  const [shown, setShown] = useState(SHOWN_AT_ONCE);
  const prospects = status ? c.prospects.filter((p) => p.status === status) : c.prospects;
  return (
    <section aria-labelledby="prospects-heading">
      <h2 id="prospects-heading">Prospects</h2>
      <StatusFilter
        prospects={c.prospects}
        value={status}
        onChange={(value) => {
          setStatus(value);
          setShown(SHOWN_AT_ONCE);
        }}
      />
      {prospects.length === 0 ? (
        <p class="muted">{c.prospects.length === 0 ? 'This campaign has no prospects yet.' : 'No prospect in this status.'}</p>
      ) : (
        <ol class="prospects">
          {prospects.slice(0, shown).map((p) => (
            <li key={p.prospectId}>
              <ProspectEditor prospect={p} onSaved={(saved) => onSaved(p, saved)} />
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
  );
}

/** Which status to show, each with how many prospects are in it. */
function StatusFilter({ prospects, value, onChange }: { prospects: Array<{ status: ProspectStatus }>; value: ProspectStatus | ''; onChange: (value: ProspectStatus | '') => void }) {
  return (
    <InlineSelect id="status-filter" label="Show" value={value} onChange={(v) => onChange(v as ProspectStatus | '')}>
      <option value="">Every status ({formatNumber(prospects.length)})</option>
      {STATUSES.map((s) => (
        <option key={s} value={s}>
          {STATUS_LABELS[s]} ({formatNumber(prospects.filter((p) => p.status === s).length)})
        </option>
      ))}
    </InlineSelect>
  );
}
