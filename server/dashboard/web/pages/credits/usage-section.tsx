/** Consumption per day over a period of 7, 30 or 90 days, and the credits the enrichment memory saved. */
import { useState } from 'preact/hooks';
import { call } from '../../api.ts';
import { ChartPlaceholder, UsageChart } from '../../components/chart.tsx';
import { Loading } from '../../components/problem.tsx';
import { InlineSelect } from '../../components/select-field.tsx';
import { plural } from '../../format.ts';
import { useLoad } from '../../load.ts';

const RANGES = [7, 30, 90] as const;

export function UsageSection() {
  const [days, setDays] = useState<number>(30);
  const usage = useLoad(() => call('getUsage', { days }), [days]);
  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">Consumption per day</h2>
      <InlineSelect id="usage-range" label="Period" value={String(days)} onChange={(value) => setDays(Number(value))}>
        {RANGES.map((n) => (
          <option key={n} value={String(n)}>
            Last {n} days
          </option>
        ))}
      </InlineSelect>
      <Loading state={usage.state} label="the consumption" placeholder={<ChartPlaceholder />}>
        {(u) => (
          <>
            <UsageChart days={u.days} title="Credits consumed per day" />
            <p id="memory-saved">
              Enrichment memory saved {plural(u.memorySaved.credits, 'credit')} this month ({plural(u.memorySaved.answers, 'answer')} given
              again without calling a provider).
            </p>
          </>
        )}
      </Loading>
    </section>
  );
}
