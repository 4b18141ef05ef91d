/** A campaign's configuration (offering, tone, language, created) and its prospects counted by status. */
import type { Out } from '../../api.ts';
import { formatNumber, formatTime } from '../../format.ts';
import { STATUS_LABELS, STATUSES } from '../../statuses.ts';

export function Summary({ campaign: c }: { campaign: Out<'getCampaign'> }) {
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
