/**
 * A small LZ77 compressor whose window starts with a dictionary trained on the release (like a
 * zstd dictionary), for documents of a few hundred bytes that share most of their text with
 * each other but little within themselves. Without entropy coding, so decompressing is a loop of
 * copies (a few µs per document, where node:zlib's inflate costs 25 to 80 µs per call, most of it
 * setting up its context). The format, LZ4's: per sequence a byte of literal length (high 4
 * bits) and match length less 4 (low 4), each 15 continued by bytes of 255 and a last byte;
 * the literals; then the match's offset back from the position, 2 bytes little-endian (into the
 * dictionary when it reaches before the document). The last sequence has literals only.
 */
const MIN_MATCH = 4;
const HASH_BITS = 16;
/** A document's own positions: it is short, and the table is cleared for each. */
const DOC_HASH_BITS = 12;
const MAX_OFFSET = 65_535;

const hash4 = (b: Uint8Array, i: number, bits: number) =>
  Math.imul(b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24), 2654435761) >>> (32 - bits);

/** How many bytes from `a` and `b` are the same, `b` staying before `a`. */
function matchLength(w: Uint8Array, a: number, b: number, end: number): number {
  let n = 0;
  while (a + n < end && b + n < a && w[b + n] === w[a + n]) n++;
  return n;
}

export class DictionaryLz {
  /** The dictionary, then room for one document (its window). */
  private window: Uint8Array;
  /** The window as a Buffer, to write a document's text into it without a copy of its own. */
  private windowBuffer: Buffer;
  private readonly dictHash: Int32Array;
  /**
   * A document's own positions, valid only where `docStamp` holds the document's number: a table
   * marked stale by a counter, where clearing 4,096 entries per document cost a tenth of compressing.
   */
  private readonly docHash = new Int32Array(1 << DOC_HASH_BITS);
  private readonly docStamp = new Int32Array(1 << DOC_HASH_BITS);
  private stamp = 0;
  private readonly dictLength: number;
  /** Where sequences are written, reused: each call answers a copy of its part. */
  private out = new Uint8Array(4096);

  constructor(dictionary: Uint8Array) {
    this.dictLength = Math.min(dictionary.length, MAX_OFFSET);
    this.window = new Uint8Array(this.dictLength + 64 * 1024);
    this.windowBuffer = Buffer.from(this.window.buffer, this.window.byteOffset, this.window.byteLength);
    this.window.set(dictionary.subarray(dictionary.length - this.dictLength));
    this.dictHash = new Int32Array(1 << HASH_BITS).fill(-1);
    for (let i = 0; i + MIN_MATCH <= this.dictLength; i++) this.dictHash[hash4(this.window, i, HASH_BITS)] = i;
  }

  compress(input: Uint8Array): Uint8Array {
    this.ensure(input.length);
    this.window.set(input, this.dictLength);
    return this.compressWindow(input.length);
  }

  /** `text` as UTF-8, compressed: written straight into the window. */
  compressText(text: string): Uint8Array {
    this.ensure(text.length * 3);
    return this.compressWindow(this.windowBuffer.write(text, this.dictLength, 'utf8'));
  }

  /** The `length` bytes after the dictionary in the window, compressed (a copy the caller keeps). */
  private compressWindow(length: number): Uint8Array {
    const d = this.dictLength;
    const w = this.window;
    const end = d + length;
    if (this.out.length < length + (length >> 4) + 16) this.out = new Uint8Array(2 * (length + (length >> 4) + 16));
    const out = this.out;
    const docHash = this.docHash;
    const docStamp = this.docStamp;
    const dictHash = this.dictHash;
    // Repeats after 2^32 documents, far beyond any release (an entry of an earlier document is matched byte by byte anyway).
    const stamp = (this.stamp = (this.stamp + 1) | 0);
    let o = 0;
    let anchor = d;
    let i = d;
    const limit = end - MIN_MATCH;
    while (i <= limit) {
      // One multiplication for both tables (hash4's, shifted two ways).
      const mixed = Math.imul(w[i]! | (w[i + 1]! << 8) | (w[i + 2]! << 16) | (w[i + 3]! << 24), 2654435761);
      const h = mixed >>> (32 - DOC_HASH_BITS);
      let best = 0;
      let from = -1;
      // A document longer than the reach of an offset (64 KiB: a company of hundreds of partners)
      // must not take a match from further back than it: the offset would wrap, and decode wrong.
      if (docStamp[h] === stamp && i - docHash[h]! <= MAX_OFFSET) {
        const own = docHash[h]!;
        best = matchLength(w, i, own, end);
        from = own;
      }
      const shared = dictHash[mixed >>> (32 - HASH_BITS)]!;
      if (shared >= 0 && i - shared <= MAX_OFFSET) {
        const n = matchLength(w, i, shared, end);
        if (n > best) (best = n), (from = shared);
      }
      docHash[h] = i;
      docStamp[h] = stamp;
      if (best < MIN_MATCH) {
        i++;
        continue;
      }
      o = this.sequence(out, o, w, anchor, i, best, i - from);
      for (let j = i + 1; j < i + best && j <= limit; j++) {
        const k = hash4(w, j, DOC_HASH_BITS);
        docHash[k] = j;
        docStamp[k] = stamp;
      }
      i += best;
      anchor = i;
    }
    o = this.sequence(out, o, w, anchor, end, 0, 0);
    return out.slice(0, o);
  }

  /** Decompresses into the window; answers the document's end there (it starts at `start`). */
  decompress(input: Uint8Array): { bytes: Uint8Array; start: number; end: number } {
    let w = this.window;
    let o = this.dictLength;
    let i = 0;
    while (i < input.length) {
      const token = input[i++]!;
      let literals = token >> 4;
      if (literals === 15) for (let b = 255; b === 255; literals += b) b = input[i++]!;
      if (o + literals + 64 > w.length) w = this.ensure(o + literals - this.dictLength + 64, o);
      for (let n = 0; n < literals; n++) w[o++] = input[i++]!;
      if (i >= input.length) break;
      let length = (token & 15) + MIN_MATCH;
      if ((token & 15) === 15) for (let b = 255; b === 255; length += b) b = input[i++]!;
      const offset = input[i]! | (input[i + 1]! << 8);
      i += 2;
      if (offset === 0 || offset > o) throw new Error('a compressed registry document is damaged');
      if (o + length + 64 > w.length) w = this.ensure(o + length - this.dictLength + 64, o);
      for (let from = o - offset, n = 0; n < length; n++) w[o++] = w[from + n]!;
    }
    return { bytes: w, start: this.dictLength, end: o };
  }

  private sequence(out: Uint8Array, o: number, w: Uint8Array, anchor: number, at: number, length: number, offset: number): number {
    const literals = at - anchor;
    const extra = length - MIN_MATCH;
    out[o++] = (Math.min(literals, 15) << 4) | (length === 0 ? 0 : Math.min(extra, 15));
    if (literals >= 15) o = lengthBytes(out, o, literals - 15);
    // Copied byte by byte: literals are a few bytes, and a view of them (subarray) cost a fifth of compressing.
    for (let from = anchor; from < at; from++) out[o++] = w[from]!;
    if (length === 0) return o;
    if (extra >= 15) o = lengthBytes(out, o, extra - 15);
    out[o++] = offset & 255;
    out[o++] = offset >> 8;
    return o;
  }

  /** Room for `size` bytes after the dictionary; the first `keep` bytes of the window kept (a document being decompressed). */
  private ensure(size: number, keep = this.dictLength): Uint8Array {
    if (this.dictLength + size <= this.window.length) return this.window;
    const grown = new Uint8Array(this.dictLength + Math.max(size, this.window.length * 2));
    grown.set(this.window.subarray(0, keep));
    this.window = grown;
    this.windowBuffer = Buffer.from(grown.buffer, grown.byteOffset, grown.byteLength);
    return grown;
  }
}

function lengthBytes(out: Uint8Array, o: number, rest: number): number {
  for (; rest >= 255; rest -= 255) out[o++] = 255;
  out[o++] = rest;
  return o;
}
