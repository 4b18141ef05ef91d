/**
 * One campaign: its configuration and counts, and its prospects with their messages and status,
 * each editable in place and saved through updateProspect (PATCH), which records the change in
 * the prospect's history like any other client's edit. Its parts are in campaign/.
 */
import { call, type Out } from '../api.ts';
import { Loading } from '../components/problem.tsx';
import { useLoad } from '../load.ts';
import type { Prospect } from './campaign/prospect-name.ts';
import { ProspectList } from './campaign/prospect-list.tsx';
import { Summary } from './campaign/summary.tsx';

/** The campaign once a prospect is saved: the prospect replaced, and the counts moved if its status changed. */
function withSaved(campaign: Out<'getCampaign'>, before: Prospect, saved: Prospect): Out<'getCampaign'> {
  const prospects = campaign.prospects.map((x) => (x.prospectId === saved.prospectId ? saved : x));
  const counts = { ...campaign.counts };
  if (saved.status !== before.status) {
    counts[before.status] -= 1;
    counts[saved.status] += 1;
  }
  return { ...campaign, prospects, counts };
}

export function CampaignPage({ campaignId }: { campaignId: string }) {
  const campaign = useLoad(() => call('getCampaign', { campaignId }), [campaignId]);
  return (
    <>
      <p class="breadcrumb">
        <a href="/dashboard/campaigns">All campaigns</a>
      </p>
      <Loading state={campaign.state} label="the campaign">
        {(c) => (
          <>
            <h1 tabIndex={-1}>{c.name}</h1>
            <Summary campaign={c} />
            <ProspectList campaign={c} onSaved={(before, saved) => campaign.set((d) => withSaved(d, before, saved))} />
          </>
        )}
      </Loading>
    </>
  );
}
