/**
 * The one form the dashboard receives without script (the sign-in link's page): a small
 * `application/x-www-form-urlencoded` body, read whole (by the API's capped reader) and parsed by
 * URLSearchParams.
 */
import { ServiceError } from '../lib/errors.ts';
import { readCapped } from '../http/body.ts';
import type { AppContext } from '../http/state.ts';

/** A sign-in form holds one token; anything much larger is not one. */
const MAX_FORM_BYTES = 4096;

/** The named field of a posted form, or undefined when absent. */
export async function formField(ctx: AppContext, name: string): Promise<string | undefined> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ServiceError('unsupported_media_type', 'Send the form as application/x-www-form-urlencoded.');
  }
  const bytes = await readCapped(ctx, MAX_FORM_BYTES, `A sign-in form is at most ${MAX_FORM_BYTES} bytes.`);
  return new URLSearchParams(bytes.toString('utf8')).get(name) ?? undefined;
}
