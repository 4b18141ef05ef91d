/**
 * Jobs: the workspace's background jobs with their progress and credits, a Cancel button while
 * one runs, and a finished job's results as CSV (every page of `getJobResults`, read here), or
 * an export's own file.
 * While a job is queued or running the list is read again every few seconds. Its parts are in jobs/.
 */
import { Loading, messageOf } from '../components/problem.tsx';
import { JobTable } from './jobs/job-table.tsx';
import { useJobs } from './jobs/use-jobs.ts';

export function Jobs() {
  const jobs = useJobs();
  return (
    <>
      <h1 tabIndex={-1}>Jobs</h1>
      <p class="lead">Bulk work started from the API or the Sheets add-on runs here in the background, item by item, each charged as one call of its operation.</p>
      {jobs.problem ? <p role="alert">{messageOf(jobs.problem)}</p> : null}
      <Loading state={jobs.state} label="the jobs">
        {({ jobs: list }) => (list.length === 0 ? <p class="muted">No jobs yet.</p> : <JobTable jobs={list} actions={jobs} />)}
      </Loading>
    </>
  );
}
