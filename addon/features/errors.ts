/** Errors in words an analyst can act on: the server's, the network's, and the add-on's own. */
import { ApiCallError } from '../api/client.ts';
import { NetworkError } from '../api/http.ts';

/** An error whose message is already written for the person using the sheet. */
export class PlainError extends Error {}

/** A run cannot go on (bad key, no credits, no column to read): it stops with this message. */
export class StopJob extends Error {}

export function plainError(err: unknown): string {
  if (err instanceof NetworkError) return `Could not reach the prospecta server (${err.message}). Check the server URL in Settings.`;
  if (err instanceof PlainError) return err.message;
  if (!(err instanceof ApiCallError)) return `The add-on ran into a problem in this spreadsheet (${err instanceof Error ? err.message : String(err)}).`;
  switch (err.status) {
    case 401:
      return 'The API key was refused. Check it in Settings, or create a new one.';
    case 402:
      return err.code === 'plan_required' ? `No active plan: ${err.message}` : `Not enough credits: ${err.message}`;
    case 403:
      return `This API key is not allowed to do that: ${err.message}`;
    case 429:
      return `Too many requests; try again in ${err.retryAfter ?? 60} seconds.`;
    default:
      return err.status >= 500 ? `The server had a problem (${err.code}). Try again shortly.` : err.message;
  }
}
