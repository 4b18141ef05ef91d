/** One job: its operation, status, progress, failures, credits and start, and what can be done with it. */
import { formatNumber, formatTime } from '../../format.ts';
import { operationName } from '../../operations.ts';
import { ACTIVE, type Job } from './use-jobs.ts';

export interface JobActions {
  busy: string | null;
  cancel(job: Job): void;
  exportResults(job: Job): void;
}

export function JobRow({ job, actions }: { job: Job; actions: JobActions }) {
  return (
    <tr>
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
        <JobAction job={job} actions={actions} />
      </td>
    </tr>
  );
}

/** Cancel while it runs; then an export's own file, or any other job's results as CSV. */
function JobAction({ job, actions }: { job: Job; actions: JobActions }) {
  if (ACTIVE.has(job.status)) {
    return (
      <button type="button" disabled={actions.busy === job.jobId} onClick={() => void actions.cancel(job)}>
        Cancel
      </button>
    );
  }
  if (job.operation === 'exportCompanies') {
    // An export has no items: its result is the file it wrote, downloaded with this session.
    return (
      <a href={`/dashboard/api/jobs/${encodeURIComponent(job.jobId)}/export`} download>
        Download the file
      </a>
    );
  }
  return (
    <button type="button" disabled={actions.busy === job.jobId} onClick={() => void actions.exportResults(job)}>
      Results (CSV)
    </button>
  );
}
