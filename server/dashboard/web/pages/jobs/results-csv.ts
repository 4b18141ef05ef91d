/** A finished job's results as CSV: every page of `getJobResults`, read in the browser. */
import { call, type Out } from '../../api.ts';
import { toCsv } from '../../csv.ts';

type Result = Out<'getJobResults'>['results'][number];

export async function allResults(jobId: string, onProgress: (n: number) => void): Promise<Result[]> {
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

export function resultsCsv(results: Result[]): string {
  return toCsv([
    ['itemId', 'status', 'creditsCharged', 'error', 'message', 'output'],
    ...results.map((r) => [r.itemId, r.status, r.creditsCharged, r.error?.error, r.error?.message, r.output === undefined ? '' : JSON.stringify(r.output)]),
  ]);
}
