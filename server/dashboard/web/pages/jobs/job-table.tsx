/** The workspace's jobs, newest first, a row each. */
import { HeaderRow, ScrollingTable } from '../../components/table.tsx';
import { JobRow, type JobActions } from './job-row.tsx';
import type { Job } from './use-jobs.ts';

export function JobTable({ jobs, actions }: { jobs: Job[]; actions: JobActions }) {
  return (
    <ScrollingTable label="Jobs" class="jobs">
      <HeaderRow columns={['Operation', 'Status', 'Progress', 'Failed', 'Credits', 'Started', 'Actions']} numeric={['Failed', 'Credits']} />
      <tbody>
        {jobs.map((job) => (
          <JobRow key={job.jobId} job={job} actions={actions} />
        ))}
      </tbody>
    </ScrollingTable>
  );
}
