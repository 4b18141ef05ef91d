/**
 * An answer's body read whole, but never more than `maxBytes`: a third party that sends far more
 * than its documents ever hold is broken or hostile, and must not fill memory. The declared
 * length refuses early; the count while reading refuses a body that lies about it or has none.
 */
export async function readCapped(res: Response, maxBytes: number): Promise<Buffer | null> {
  if (Number(res.headers.get('content-length') ?? 0) > maxBytes) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body?.cancel().catch(() => {});
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
