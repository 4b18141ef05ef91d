/**
 * A job's results, page by page in item order. The cursor names the job and the last index given,
 * so it cannot be used on another job (400 `invalid_cursor`). While the job runs, a page stops
 * before its first unfinished item, so following the cursors never skips one; once it has ended,
 * items that never ran (a cancelled or stopped job) are passed over and the last page's cursor is null.
 */
import type { OutputOf } from '../../shared/operations/index.ts';
import { ServiceError } from '../lib/errors.ts';
import { isEnded, type JobDoc, type JobItemDoc, type Jobs } from './jobs.ts';

type Page = OutputOf<'getJobResults'>;

const invalidCursor = () => new ServiceError('invalid_cursor', 'cursor is not a cursor of this job; send the nextCursor of its previous page.');

export function encodeCursor(jobId: string, index: number): string {
  return Buffer.from(JSON.stringify([jobId, index])).toString('base64url');
}

export function decodeCursor(cursor: string, jobId: string): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!Array.isArray(decoded) || decoded[0] !== jobId || !Number.isSafeInteger(decoded[1]) || (decoded[1] as number) < -1) throw invalidCursor();
  return decoded[1] as number;
}

export async function resultsPage(jobs: Jobs, job: JobDoc, after: number, limit: number): Promise<Page> {
  const ended = isEnded(job.status);
  const docs = await jobs.results(job._id, after, limit + 1);
  const results: Page['results'] = [];
  let last = after;
  let more = docs.length > limit;
  for (const doc of docs) {
    if (results.length === limit) {
      more = true;
      break;
    }
    if (doc.status === 'pending') {
      if (!ended) {
        more = true;
        break;
      }
      last = doc.index;
      continue;
    }
    results.push(resultOf(doc));
    last = doc.index;
  }
  return { results, nextCursor: ended && !more ? null : encodeCursor(job._id, last) };
}

function resultOf(doc: JobItemDoc): Page['results'][number] {
  if (doc.status === 'ok') return { itemId: doc.itemId, status: 'ok', output: JSON.parse(doc.output ?? 'null'), creditsCharged: doc.creditsCharged };
  return { itemId: doc.itemId, status: 'error', error: doc.error ?? { error: 'internal_error', message: 'The item failed.' }, creditsCharged: doc.creditsCharged };
}
