/**
 * The workspace's figures (balance, plan, trial days left, consumption), when its trial ends, and
 * that operations need a plan when it has none; the empty boxes while they load.
 */
import type { Out } from '../../api.ts';
import { daysLeft, formatNumber, formatTime } from '../../format.ts';

const PLAN_NAMES = { none: 'No plan', trial: 'Trial', active: 'Active' } as const;

export function PlanStats({ credits: c }: { credits: Out<'getCredits'> }) {
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
      {planless && <PlanRequired />}
    </>
  );
}

function PlanRequired() {
  return (
    <div class="notice plan">
      <p>
        <strong>No active plan.</strong> Search, enrichment, AI and outreach operations answer “plan required” until the
        workspace has a plan. This dashboard, the credits, your API keys and a few agent messages a day stay available.
      </p>
    </div>
  );
}

/** The figures' boxes, empty, while the balance loads. */
export function StatsPlaceholder() {
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
