/** Campaigns: each with its prospects in each of the six statuses, linking to its prospects. */
import { call } from '../api.ts';
import { formatNumber, formatTime } from '../format.ts';
import { useLoad } from '../load.ts';
import { Loading } from '../problem.tsx';
import { STATUS_LABELS, STATUSES } from '../statuses.ts';

export function Campaigns() {
  const campaigns = useLoad(() => call('listCampaigns'), []);
  return (
    <>
      <h1 tabIndex={-1}>Campaigns</h1>
      <p class="lead">Campaigns are created from the Sheets add-on or the API. Open one to review and edit its prospects’ messages and status.</p>
      <Loading state={campaigns.state} label="the campaigns">
        {({ campaigns: list }) =>
          list.length === 0 ? (
            <p class="muted">No campaigns yet.</p>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Campaigns and their prospects by status">
              <table class="campaigns">
                <thead>
                  <tr>
                    <th scope="col">Campaign</th>
                    <th scope="col" class="num">
                      Prospects
                    </th>
                    {STATUSES.map((s) => (
                      <th scope="col" class="num" key={s}>
                        {STATUS_LABELS[s]}
                      </th>
                    ))}
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((c) => (
                    <tr key={c.campaignId}>
                      <th scope="row">
                        <a href={`/dashboard/campaigns/${c.campaignId}`}>{c.name}</a>
                      </th>
                      <td class="num">{formatNumber(STATUSES.reduce((sum, s) => sum + c.counts[s], 0))}</td>
                      {STATUSES.map((s) => (
                        <td class="num" key={s}>
                          {formatNumber(c.counts[s])}
                        </td>
                      ))}
                      <td class="nowrap">{formatTime(c.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
    </>
  );
}
