/**
 * The workspace's jobs, read again every few seconds while one is queued or running, and their
 * two actions, Cancel and Results (CSV): which job is busy, and what failed.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type Out } from '../../api.ts';
import { useBusy } from '../../busy.ts';
import { messageOf } from '../../components/problem.tsx';
import { download } from '../../csv.ts';
import { formatNumber } from '../../format.ts';
import { announce } from '../../live.ts';
import { useLoad } from '../../load.ts';
import { operationName } from '../../operations.ts';
import { allResults, resultsCsv } from './results-csv.ts';

export type Job = Out<'getJob'>;

const REFRESH_MS = 3000;
export const ACTIVE = new Set<Job['status']>(['queued', 'running']);

export function useJobs() {
  const jobs = useLoad(() => call('listJobs'), []);
  const { busy, run } = useBusy();
  const [problem, setProblem] = useState<unknown>(null);
  const running = jobs.state.status === 'ok' && jobs.state.data.jobs.some((j) => ACTIVE.has(j.status));

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(jobs.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, jobs.reload]);

  /** Runs one job's action; `failed` is what screen readers hear before the reason. */
  function act(job: Job, failed: string, task: () => Promise<void>) {
    setProblem(null);
    return run(job.jobId, task, (err) => {
      setProblem(err);
      announce(`${failed}: ${messageOf(err)}`);
    });
  }

  const cancel = (job: Job) =>
    act(job, 'Cancelling failed', async () => {
      const cancelled = await call('cancelJob', { jobId: job.jobId });
      jobs.set((data) => ({ jobs: data.jobs.map((j) => (j.jobId === job.jobId ? cancelled : j)) }));
      announce(`The “${operationName(job.operation)}” job was cancelled.`);
    });

  const exportResults = (job: Job) =>
    act(job, 'The export failed', async () => {
      const results = await allResults(job.jobId, () => {});
      download(`prospecta-job-${job.operation}-${job.jobId.slice(0, 8)}.csv`, resultsCsv(results));
      announce(`Exported ${formatNumber(results.length)} results as CSV.`);
    });

  return { state: jobs.state, busy, problem, cancel, exportResults };
}
