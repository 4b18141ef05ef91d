/**
 * The one form the dashboard receives without script (the sign-in link's page): a small
 * `application/x-www-form-urlencoded` body, read whole and parsed by URLSearchParams.
 */
import { ServiceError } from '../lib/errors.ts';
import type { AppContext } from '../http/state.ts';

/** A sign-in form holds one token; anything much larger is not one. */
const MAX_FORM_BYTES = 4096;

/** The named field of a posted form, or undefined when absent. */
export async function formField(ctx: AppContext, name: string): Promise<string | undefined> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new ServiceError('unsupported_media_type', 'Send the form as application/x-www-form-urlencoded.');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) {
      ctx.set('Connection', 'close');
      throw new ServiceError('payload_too_large', `A sign-in form is at most ${MAX_FORM_BYTES} bytes.`);
    }
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks, size).toString('utf8')).get(name) ?? undefined;
}
