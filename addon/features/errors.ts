/** Errors from the server, in words an analyst can act on. */
import { ApiCallError } from '../api/client.ts';

export function plainError(err: unknown): string {
  if (!(err instanceof ApiCallError)) {
    return `Could not reach the prospecta server (${err instanceof Error ? err.message : String(err)}). Check the server URL in Settings.`;
  }
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
