/**
 * Jobs: the workspace's background jobs with their progress and credits, a Cancel button while
 * one runs, and a finished job's results as CSV (every page of `getJobResults`, read here), or
 * an export's own file.
 * While a job is queued or running the list is read again every few seconds.
 */
import { useEffect, useState } from 'preact/hooks';
import { call, type Out } from '../api.ts';
import { download, toCsv } from '../csv.ts';
import { formatNumber, formatTime } from '../format.ts';
import { announce } from '../live.ts';
import { useLoad } from '../load.ts';
import { operationName } from '../operations.ts';
import { Loading, messageOf } from '../problem.tsx';

type Job = Out<'getJob'>;
type Result = Out<'getJobResults'>['results'][number];

const REFRESH_MS = 3000;
const ACTIVE = new Set<Job['status']>(['queued', 'running']);

async function allResults(jobId: string, onProgress: (n: number) => void): Promise<Result[]> {
  const results: Result[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await call('getJobResults', { jobId, limit: 500, ...(cursor ? { cursor } : {}) });
    results.push(...page.results);
    onProgress(results.length);
    if (page.nextCursor === null) return results;
    cursor = page.nextCursor;
  }
}

function resultsCsv(results: Result[]): string {
  return toCsv([
    ['itemId', 'status', 'creditsCharged', 'error', 'message', 'output'],
    ...results.map((r) => [r.itemId, r.status, r.creditsCharged, r.error?.error, r.error?.message, r.output === undefined ? '' : JSON.stringify(r.output)]),
  ]);
}

export function Jobs() {
  const jobs = useLoad(() => call('listJobs'), []);
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const running = jobs.state.status === 'ok' && jobs.state.data.jobs.some((j) => ACTIVE.has(j.status));

  useEffect(() => {
    if (!running) return;
    const timer = setInterval(jobs.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, jobs.reload]);

  async function cancel(job: Job) {
    setProblem(null);
    setBusy(job.jobId);
    try {
      const cancelled = await call('cancelJob', { jobId: job.jobId });
      jobs.set((data) => ({ jobs: data.jobs.map((j) => (j.jobId === job.jobId ? cancelled : j)) }));
      announce(`The “${operationName(job.operation)}” job was cancelled.`);
    } catch (err) {
      setProblem(err);
      announce(`Cancelling failed: ${messageOf(err)}`);
    } finally {
      setBusy(null);
    }
  }

  async function exportResults(job: Job) {
    setProblem(null);
    setBusy(job.jobId);
    try {
      const results = await allResults(job.jobId, () => {});
      download(`prospecta-job-${job.operation}-${job.jobId.slice(0, 8)}.csv`, resultsCsv(results));
      announce(`Exported ${formatNumber(results.length)} results as CSV.`);
    } catch (err) {
      setProblem(err);
      announce(`The export failed: ${messageOf(err)}`);
    } finally {
      setBusy(null);
    }
  }

  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      <p class="lead">Bulk work started from the API or the Sheets add-on runs here in the background, item by item, each charged as one call of its operation.</p>
      {problem ? <p role="alert">{messageOf(problem)}</p> : null}
      <Loading state={jobs.state} label="the jobs">
        {({ jobs: list }) =>
          list.length === 0 ? (
            <p class="muted">No jobs yet.</p>
          ) : (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Jobs">
              <table class="jobs">
                <thead>
                  <tr>
                    <th scope="col">Operation</th>
                    <th scope="col">Status</th>
                    <th scope="col">Progress</th>
                    <th scope="col" class="num">
                      Failed
                    </th>
                    <th scope="col" class="num">
                      Credits
                    </th>
                    <th scope="col">Started</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((job) => (
                    <tr key={job.jobId}>
                      <th scope="row">{operationName(job.operation)}</th>
                      <td>{job.status}</td>
                      <td class="nowrap">
                        <progress max={job.total} value={job.done + job.failed} aria-label={`Progress of the “${operationName(job.operation)}” job`} />{' '}
                        {formatNumber(job.done + job.failed)} / {formatNumber(job.total)}
                      </td>
                      <td class="num">{formatNumber(job.failed)}</td>
                      <td class="num">{formatNumber(job.creditsCharged)}</td>
                      <td class="nowrap">{formatTime(job.createdAt)}</td>
                      <td class="nowrap">
                        {ACTIVE.has(job.status) ? (
                          <button type="button" disabled={busy === job.jobId} onClick={() => void cancel(job)}>
                            Cancel
                          </button>
                        ) : job.operation === 'exportCompanies' ? (
                          // An export has no items: its result is the file it wrote, downloaded with this session.
                          <a href={`/dashboard/api/jobs/${encodeURIComponent(job.jobId)}/export`} download>
                            Download the file
                          </a>
                        ) : (
                          <button type="button" disabled={busy === job.jobId} onClick={() => void exportResults(job)}>
                            Results (CSV)
                          </button>
                        )}
                      </td>
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
