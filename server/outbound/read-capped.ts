/**
 * An answer's body read whole, but never more than `maxBytes`: a third party that sends far more
 * than its documents ever hold is broken or hostile, and must not fill memory. The declared
 * length refuses early; the count while reading (lib/read-up-to.ts) refuses a body that lies
 * about it or has none.
 */
import { readUpTo } from '../lib/read-up-to.ts';

export async function readCapped(res: Response, maxBytes: number): Promise<Buffer | null> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  if (!res.body) return Buffer.alloc(0);
  const bytes = await readUpTo(res.body, maxBytes);
  if (!bytes) await res.body.cancel().catch(() => {});
  return bytes;
}
