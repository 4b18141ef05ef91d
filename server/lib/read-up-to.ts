/**
 * The one capped reader: a body read whole, but never more than `maxBytes`, whatever carries it
 * (a request, a form, a third party's answer). Null when it is larger: the reader stops there,
 * and its caller says why (a 413 that closes the connection, an answer refused and cancelled).
 */
export async function readUpTo(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
