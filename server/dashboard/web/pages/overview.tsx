/** Overview: balance, plan, trial days left, 30 days of consumption, the latest movements. */
import { call } from '../api.ts';
import { ChartPlaceholder, UsageChart } from '../chart.tsx';
import { daysLeft, formatNumber, formatTime } from '../format.ts';
import { useLoad } from '../load.ts';
import { MovementsTable } from '../movements.tsx';
import { Loading } from '../problem.tsx';

const PLAN_NAMES = { none: 'No plan', trial: 'Trial', active: 'Active' } as const;
const RECENT = 10;

export function Overview() {
  const credits = useLoad(() => call('getCredits'), []);
  const usage = useLoad(() => call('getUsage', { days: 30 }), []);

  return (
    <>
      <h1 tabIndex={-1}>Overview</h1>
      <Loading state={credits.state} label="the balance" placeholder={<StatsPlaceholder />}>
        {(c) => {
          const trialLeft = c.plan.name === 'trial' && c.plan.expiresAt ? daysLeft(c.plan.expiresAt) : null;
          const planless = c.plan.name === 'none' || trialLeft === 0;
          return (
            <>
              <dl class="stats">
                <div>
                  <dt id="balance-label">Credit balance</dt>
                  <dd aria-labelledby="balance-label">{formatNumber(c.balance)}</dd>
                </div>
                <div>
                  <dt id="plan-label">Plan</dt>
                  <dd aria-labelledby="plan-label">{trialLeft === 0 ? 'Trial (ended)' : PLAN_NAMES[c.plan.name]}</dd>
                </div>
                {trialLeft !== null && (
                  <div>
                    <dt id="trial-label">Trial days left</dt>
                    <dd aria-labelledby="trial-label" title={`Ends ${formatTime(c.plan.expiresAt)}`}>
                      {formatNumber(trialLeft)}
                    </dd>
                  </div>
                )}
                <div>
                  <dt id="consumed-label">Consumed in all</dt>
                  <dd aria-labelledby="consumed-label">{formatNumber(c.consumed)}</dd>
                </div>
              </dl>
              {trialLeft !== null && trialLeft > 0 && c.plan.expiresAt && (
                <p class="muted">
                  The trial ends {formatTime(c.plan.expiresAt)}; its unspent credits expire with it.
                </p>
              )}
              {planless && (
                <div class="notice plan">
                  <p>
                    <strong>No active plan.</strong> Search, enrichment, AI and outreach operations answer “plan required” until the
                    workspace has a plan. This dashboard, the credits, your API keys and a few agent messages a day stay available.
                  </p>
                </div>
              )}
            </>
          );
        }}
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

/** The figures' boxes, empty, while the balance loads. */
function StatsPlaceholder() {
  return (
    <dl class="stats">
      {['Credit balance', 'Plan', 'Consumed in all'].map((name) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>…</dd>
        </div>
      ))}
    </dl>
  );
}
