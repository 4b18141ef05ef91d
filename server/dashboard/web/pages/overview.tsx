/** Overview: balance, plan, trial days left, 30 days of consumption, the latest movements. Its figures are in overview/. */
import { call } from '../api.ts';
import { ChartPlaceholder, UsageChart } from '../components/chart.tsx';
import { MovementsTable } from '../components/movements.tsx';
import { Loading } from '../components/problem.tsx';
import { useLoad } from '../load.ts';
import { PlanStats, StatsPlaceholder } from './overview/plan-stats.tsx';

const RECENT = 10;

export function Overview() {
  const credits = useLoad(() => call('getCredits'), []);
  const usage = useLoad(() => call('getUsage', { days: 30 }), []);

  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <Loading state={credits.state} label="the balance" placeholder={<StatsPlaceholder />}>
        {(c) => <PlanStats credits={c} />}
      </Loading>

      <section aria-labelledby="usage-heading">
        <h2 id="usage-heading">Consumption, last 30 days</h2>
        <Loading state={usage.state} label="the consumption" placeholder={<ChartPlaceholder />}>
          {(u) => <UsageChart days={u.days} title="Credits consumed per day" />}
        </Loading>
      </section>

      <section aria-labelledby="activity-heading">
        <h2 id="activity-heading">Recent activity</h2>
        <Loading state={credits.state} label="the movements">
          {(c) => (
            <>
              <MovementsTable movements={c.movements.slice(0, RECENT)} caption="Latest credit movements" />
              <p class="more">
                <a href="/dashboard/credits">All movements</a>
              </p>
            </>
          )}
        </Loading>
      </section>
    </>
  );
}
