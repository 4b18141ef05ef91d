/**
 * Credits consumed per day as bars, drawn by uPlot (loaded on first use, so pages without a chart
 * never fetch it). The canvas is hidden from screen readers; the same figures are in a summary
 * sentence and a table beside it.
 */
import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { formatDay, formatNumber, plural } from '../format.ts';
import { HeaderRow, ScrollingTable } from './table.tsx';

export interface Day {
  date: string;
  consumed: number;
}

const ACCENT = '#1d4ed8';
const HEIGHT = 200;
const WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9];

/** Draws the days into `box` as bars once uPlot has loaded, again when they change, and cleans up after. */
function useBars(box: RefObject<HTMLDivElement | null>, days: Day[]) {
  useEffect(() => {
    let cancelled = false;
    let cleanup = () => {};
    void import('uplot').then(({ default: uPlot }) => {
      const el = box.current;
      if (cancelled || !el) return;
      const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
      const ys = days.map((d) => d.consumed);
      const plot = new uPlot(
        {
          width: Math.max(el.clientWidth, 200),
          height: HEIGHT,
          tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
          legend: { show: false },
          cursor: { show: true, x: false, y: false, points: { show: false } },
          scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] }, y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
          axes: [
            { stroke: '#475569', grid: { show: false }, ticks: { stroke: '#cbd5e1' } },
            // Credits are whole: no 0.25 ticks.
            { stroke: '#475569', grid: { stroke: '#e2e8f0' }, ticks: { show: false }, size: 48, incrs: WHOLE_STEPS },
          ],
          series: [{}, { label: 'Credits consumed', fill: ACCENT, stroke: ACCENT, paths: uPlot.paths.bars!({ size: [0.7, 24] }), points: { show: false } }],
        },
        [xs, ys],
        el,
      );
      const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 200), height: HEIGHT }));
      resize.observe(el);
      cleanup = () => {
        resize.disconnect();
        plot.destroy();
      };
    });
    return () => {
      cancelled = true;
      cleanup();
    };
  }, [days]);
}

export function UsageChart({ days, title }: { days: Day[]; title: string }) {
  const box = useRef<HTMLDivElement>(null);
  useBars(box, days);
  const total = days.reduce((sum, d) => sum + d.consumed, 0);
  const peak = days.reduce<Day | null>((best, d) => (d.consumed > (best?.consumed ?? 0) ? d : best), null);
  return (
    <figure class="chart">
      <figcaption>
        {title}: {plural(total, 'credit')} in {plural(days.length, 'day')}
        {peak ? `, most on ${formatDay(peak.date)} (${formatNumber(peak.consumed)})` : ''}.
      </figcaption>
      <div class="chart-canvas" ref={box} aria-hidden="true" />
      <details>
        <summary>Show the figures as a table</summary>
        <FiguresTable days={days} label={`${title}, by day`} />
      </details>
    </figure>
  );
}

/** The chart's figures for screen readers and anyone who wants them exact. */
function FiguresTable({ days, label }: { days: Day[]; label: string }) {
  return (
    <ScrollingTable label={label}>
      <HeaderRow columns={['Day (UTC)', 'Credits consumed']} numeric={['Credits consumed']} />
      <tbody>
        {days.map((d) => (
          <tr key={d.date}>
            <td>{d.date}</td>
            <td class="num">{formatNumber(d.consumed)}</td>
          </tr>
        ))}
      </tbody>
    </ScrollingTable>
  );
}

/** The chart's frame at its final size while the figures load. */
export function ChartPlaceholder() {
  return (
    <figure class="chart">
      <figcaption>Loading the figures…</figcaption>
      <div class="chart-canvas" />
      <p class="summary-placeholder">Show the figures as a table</p>
    </figure>
  );
}
