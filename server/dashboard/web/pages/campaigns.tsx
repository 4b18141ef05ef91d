/** Campaigns: each with its prospects in each of the six statuses, linking to its prospects. */
import { call, type Out } from '../api.ts';
import { Loading } from '../components/problem.tsx';
import { HeaderRow, ScrollingTable } from '../components/table.tsx';
import { formatNumber, formatTime } from '../format.ts';
import { useLoad } from '../load.ts';
import { STATUS_LABELS, STATUSES } from '../statuses.ts';

type Campaign = Out<'listCampaigns'>['campaigns'][number];

/** The status columns' names. */
const counted = STATUSES.map((s) => STATUS_LABELS[s]);

export function Campaigns() {
  const campaigns = useLoad(() => call('listCampaigns'), []);
  return (
    <>
      <h1 tabIndex={-1}>Campaigns</h1>
      <p class="lead">Campaigns are created from the Sheets add-on or the API. Open one to review and edit its prospects’ messages and status.</p>
      <Loading state={campaigns.state} label="the campaigns">
        {({ campaigns: list }) => (list.length === 0 ? <p class="muted">No campaigns yet.</p> : <CampaignTable campaigns={list} />)}
      </Loading>
    </>
  );
}

function CampaignTable({ campaigns }: { campaigns: Campaign[] }) {
  return (
    <ScrollingTable label="Campaigns and their prospects by status" class="campaigns">
      <HeaderRow columns={['Campaign', 'Prospects', ...counted, 'Created']} numeric={['Prospects', ...counted]} />
      <tbody>
        {campaigns.map((c) => (
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
    </ScrollingTable>
  );
}
