/**
 * A stored document's JSON without some of its top-level fields, cut from its bytes rather than
 * parsed and written again: how the embedded store answers `jsonByIds` (see port.ts) from the
 * text the database holds. The bytes are as `JSON.stringify` writes them (the codec's
 * encoding, no whitespace); the scan only tells strings and nesting apart, so it costs a pass over
 * the bytes, a fraction of parsing them (issue 35: parsing 500 registry documents and writing
 * them again was most of a CNPJ batch).
 */
import { decode, type Doc } from './codec.ts';

const QUOTE = 0x22;
const DOLLAR = 0x24;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/**
 * Where a member's value starting at `i` ends (just past it); -1 past `end` (bytes that are not
 * JSON), or at a string starting with `$`, which may be one of the codec's tags (`{"$date": …}`)
 * that plain JSON spells differently (a string value that merely starts so is parsed for nothing).
 */
function valueEnd(b: Uint8Array, i: number, end: number): number {
  let depth = 0;
  for (; i < end; i++) {
    const c = b[i];
    if (c === QUOTE) {
      if (b[++i] === DOLLAR) return -1;
      while (i < end && b[i] !== QUOTE) i += b[i] === BACKSLASH ? 2 : 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (c === COMMA && depth === 0) {
      return i;
    }
  }
  return -1;
}

/** The members' names as they start a member in JSON (`"name":`), to compare bytes with. */
export function memberPrefixes(names: readonly string[]): Buffer[] {
  return names.map((name) => Buffer.from(`${JSON.stringify(name)}:`));
}

function startsWith(b: Uint8Array, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > b.length) return false;
  for (let k = 0; k < prefix.length; k++) if (b[at + k] !== prefix[k]) return false;
  return true;
}

/**
 * The object in `bytes[start, end)` without the top-level members whose `"name":` is among
 * `omit`, as new bytes; undefined when the bytes are not an object this scan can read or may hold
 * a tagged value (the caller then parses them).
 */
export function withoutMembers(bytes: Uint8Array, start: number, end: number, omit: readonly Buffer[]): Buffer | undefined {
  if (bytes[start] !== OPEN_OBJECT || bytes[end - 1] !== CLOSE_OBJECT) return undefined;
  // Spans of kept members, [from, to) pairs; neighbours kept together are one span.
  const spans: number[] = [];
  let i = start + 1;
  const last = end - 1;
  while (i < last) {
    if (bytes[i] !== QUOTE) return undefined;
    const memberStart = i;
    const dropped = omit.some((prefix) => startsWith(bytes, i, prefix));
    // Past the name (a string), then its colon.
    i++;
    while (i < last && bytes[i] !== QUOTE) i += bytes[i] === BACKSLASH ? 2 : 1;
    i += 2;
    const memberEnd = valueEnd(bytes, i, last + 1);
    if (memberEnd === -1 || memberEnd > last) return undefined;
    if (!dropped) {
      if (spans.length > 0 && spans[spans.length - 1] === memberStart - 1) spans[spans.length - 1] = memberEnd;
      else spans.push(memberStart, memberEnd);
    }
    i = memberEnd;
    if (i === last) break;
    if (bytes[i] !== COMMA) return undefined;
    i++;
  }
  const pieces: Uint8Array[] = [OPEN];
  for (let k = 0; k < spans.length; k += 2) {
    if (k > 0) pieces.push(SEPARATOR);
    pieces.push(bytes.subarray(spans[k], spans[k + 1]));
  }
  pieces.push(CLOSE);
  return Buffer.concat(pieces);
}

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const SEPARATOR = Buffer.from(',');

/**
 * A stored document's text as `JSON.stringify` writes it without the `omit` members (names, and
 * their `memberPrefixes`): cut from its bytes when it holds no tagged value (a Date, NaN, which
 * plain JSON spells differently); else parsed and written again.
 */
export function jsonOf(text: string, omit: { names: ReadonlySet<string>; prefixes: readonly Buffer[] }): Buffer {
  const bytes = Buffer.from(text);
  const cut = withoutMembers(bytes, 0, bytes.length, omit.prefixes);
  if (cut) return cut;
  const doc = decode(text) as Doc;
  const kept: Record<string, unknown> = {};
  for (const key in doc) if (!omit.names.has(key)) kept[key] = doc[key];
  return Buffer.from(JSON.stringify(kept));
}
