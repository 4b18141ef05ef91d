/**
 * Reads a JSON request body, only when an operation that takes one asks for it (so routing, the
 * method, the credential and the rate limit are decided before any byte is read or parsed).
 *
 * Every way a body can be wrong is a 4xx that names the cause, never a 500:
 * - another media type (anything but application/json: application/merge-patch+json too) or
 *   charset → 415; a `Content-Encoding` other than gzip, deflate, br or
 *   identity → 415;
 * - more than the operation takes (1 MiB unless its entry says more: `bodyLimitOf`), as sent or
 *   once decompressed (no zip bombs) → 413;
 * - a compressed body that does not decompress, bytes that are not UTF-8 → 400;
 * - JSON nested deeper than MAX_JSON_DEPTH or an object of more than MAX_OBJECT_KEYS keys → 400,
 *   found by a scan of the text before `JSON.parse` builds anything;
 * - malformed JSON (V8's message, which says where), a member name repeated in one object (JSON.parse
 *   would keep the last silently), a `__proto__` key, a NUL character or a lone surrogate in any
 *   string, a number JSON cannot carry back (1e309) → 400 naming the field.
 * An empty body is treated as absent, so "all optional" bodies may be omitted.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DEFAULT_BODY_BYTES } from '../../shared/operations/types.ts';
import { ServiceError, invalidRequest } from '../lib/errors.ts';
import { readUpTo } from '../lib/read-up-to.ts';
import type { AppContext } from './state.ts';

export const MAX_BODY_BYTES = DEFAULT_BODY_BYTES;
/** Deeper than any body an operation accepts (a hydrate lead is the deepest, a few levels). */
export const MAX_JSON_DEPTH = 64;
/** Keys in one JSON object; a sheet row's cells are the widest legitimate object. */
export const MAX_OBJECT_KEYS = 1000;

export const mebibytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`;
const tooLarge = (maxBytes: number) => `The body is larger than ${mebibytes(maxBytes)}.`;

type Inflate = (input: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;

const DECODERS: Record<string, Inflate> = {
  gzip: promisify(zlib.gunzip) as Inflate,
  'x-gzip': promisify(zlib.gunzip) as Inflate,
  deflate: promisify(zlib.inflate) as Inflate,
  br: promisify(zlib.brotliDecompress) as Inflate,
};

function hasBody(ctx: AppContext): boolean {
  const length = ctx.get('Content-Length');
  return Boolean(ctx.get('Transfer-Encoding')) || (length !== '' && length !== '0');
}

/** The parsed body, or undefined when none was sent. Throws a ServiceError (4xx) otherwise. */
export async function readJsonBody(ctx: AppContext, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is('application/json')) {
    throw new ServiceError('unsupported_media_type', `Send the body as application/json, not ${ctx.get('Content-Type') || 'without a Content-Type'}.`);
  }
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw new ServiceError('unsupported_media_type', `Send the body in UTF-8, not ${charset.slice(0, 40)}.`);
  }
  const inflate = decoderOf(ctx.get('Content-Encoding'));
  if (Number(ctx.get('Content-Length')) > maxBytes) throw new ServiceError('payload_too_large', tooLarge(maxBytes));
  const sent = await readCapped(ctx, maxBytes);
  const bytes = inflate ? await decompress(inflate, sent, ctx.get('Content-Encoding'), maxBytes) : sent;
  return parseJsonBody(bytes);
}

/** null for identity; 415 for an encoding we do not decode (or a chain of several). */
function decoderOf(header: string): Inflate | null {
  const encoding = header.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return null;
  const decoder = DECODERS[encoding];
  if (!decoder) {
    throw new ServiceError('unsupported_media_type', `Content-Encoding ${JSON.stringify(header.slice(0, 40))} is not supported; send gzip, deflate, br or identity.`);
  }
  return decoder;
}

/**
 * The raw body, at most MAX_BODY_BYTES; past that, 413 `payload_too_large` without reading the
 * rest (the connection is then closed: it cannot carry another request). MCP reads its messages
 * through it too.
 */
export async function readCapped(ctx: AppContext, maxBytes = MAX_BODY_BYTES, tooLargeMessage = tooLarge(maxBytes)): Promise<Buffer> {
  const bytes = await readUpTo(ctx.req, maxBytes);
  if (bytes) return bytes;
  // The rest is not read: the connection cannot carry another request after it.
  ctx.set('Connection', 'close');
  throw new ServiceError('payload_too_large', tooLargeMessage);
}

async function decompress(inflate: Inflate, sent: Buffer, encoding: string, maxBytes: number): Promise<Buffer> {
  try {
    return await inflate(sent, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new ServiceError('payload_too_large', `The body is larger than ${mebibytes(maxBytes)} once decompressed.`);
    }
    throw invalidRequest(`The body does not decode as Content-Encoding ${encoding.trim().toLowerCase()} (${(err as Error).message}).`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Something in a JSON value no operation may receive, and where: `path` leads from the top
 * (property names and array indexes), so a binding can tell which part of a message it is in
 * (MCP answers a problem in a tool's arguments as that tool's error) and name the field from there.
 */
export interface ValueProblem {
  path: Array<string | number>;
  /** The message, given the name of the field as the binding calls it (`filters.email`, `the body`). */
  message(field: string): string;
}

/** `filters.titles[2]`, as the messages name a field; '' for the top. */
export function fieldOf(path: ReadonlyArray<string | number>): string {
  let field = '';
  for (const part of path) field = typeof part === 'number' ? `${field}[${part}]` : field ? `${field}.${part}` : part;
  return field;
}

/** Bytes → JSON value, or a 400 naming what is wrong. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const { value, problem } = readJson(bytes);
  if (problem) throw invalidRequest(problem.message(fieldOf(problem.path) || 'the body'));
  return value;
}

/**
 * Bytes → JSON value and the first value in it no operation may receive (a repeated member name,
 * `__proto__`, NUL, a lone surrogate, a number past 1e308), for a binding that answers those
 * itself (MCP); a 400 for what is not a JSON value at all, or is too deep or too wide to read.
 */
export function readJson(bytes: Uint8Array): { value: unknown; problem: ValueProblem | null } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidRequest('The body is not valid UTF-8: send JSON text encoded in UTF-8.');
  }
  if (text === '') return { value: undefined, problem: null };
  if (text.trim() === '') throw invalidRequest('The body holds only whitespace: send a JSON value, or no body at all.');
  const scanned = scan(text);
  if (typeof scanned === 'string') throw invalidRequest(scanned);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`The body is not valid JSON: ${printable((err as Error).message)}.`);
  }
  return { value, problem: scanned ?? checkValues(value, []) };
}

/**
 * One pass over the text counting nesting and the keys of each open object (a `:` outside a
 * string is a key in valid JSON; invalid JSON is left to JSON.parse), and noting the first member
 * name an object repeats, which JSON.parse would silently drop all but the last of. Costs a
 * fraction of the parse. A limit passed is a message; a repeated name a problem with its path.
 */
function scan(text: string): string | ValueProblem | null {
  const keys = new Int32Array(MAX_JSON_DEPTH + 2);
  /** Per open container: an array's index so far, or an object's names so far and its current one. */
  const arrayIndex = new Int32Array(MAX_JSON_DEPTH + 2);
  const isArray = new Uint8Array(MAX_JSON_DEPTH + 2);
  const names: Array<Set<string> | undefined> = [];
  const current: string[] = [];
  let repeated: ValueProblem | null = null;
  let depth = 0;
  let stringStart = 0;
  let stringEnd = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string, escapes included.
      stringStart = i + 1;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
      stringEnd = i;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return `The body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays.`;
      keys[depth] = 0;
      arrayIndex[depth] = 0;
      isArray[depth] = c === 0x5b ? 1 : 0;
      if (c === 0x7b) names[depth]?.clear();
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x2c && depth > 0 && isArray[depth]) {
      arrayIndex[depth]!++;
    } else if (c === 0x3a && depth > 0) {
      if (++keys[depth]! > MAX_OBJECT_KEYS) return `The body has an object with more than ${MAX_OBJECT_KEYS} keys.`;
      if (repeated) continue;
      const name = memberName(text.slice(stringStart, stringEnd));
      const seen = (names[depth] ??= new Set());
      current[depth] = name;
      if (!seen.has(name)) seen.add(name);
      else {
        const path: Array<string | number> = [];
        for (let d = 1; d <= depth; d++) path.push(isArray[d] ? arrayIndex[d]! : current[d]!);
        repeated = { path, message: (field) => `${field} is sent more than once in its object: send each property once` };
      }
    }
  }
  return repeated;
}

/** A member name as JSON.parse reads it (`"\u0061"` is `a`); as written when it does not decode (JSON.parse then says why). */
function memberName(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

const NUL = /\u0000/;
/**
 * The NUL rule as a JSON Schema pattern, for the OpenAPI document (openapi-input.ts): a string
 * without NUL, and one that is also not blank (the `\S` of names).
 */
export const NUL_FREE_PATTERN = '^[^\\x00]*$';
export const NUL_FREE_NOT_BLANK_PATTERN = '^[^\\x00]*[^\\s\\x00][^\\x00]*$';
/** ES2024, in Node 20; the project's lib is older. */
type WellFormed = string & { isWellFormed(): boolean };

/** The first value no operation may receive, with where it is; null if none. */
function checkValues(value: unknown, path: Array<string | number>): ValueProblem | null {
  if (typeof value === 'string') return checkText(value, path);
  if (typeof value === 'number') {
    return Number.isFinite(value) ? null : { path, message: (field) => `${field} is a number too large to represent` };
  }
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = checkValues(value[i], [...path, i]);
      if (problem) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return { path, message: (field) => `${field} must not have a property named __proto__` };
    const keyProblem = checkText(key, [...path, key]);
    if (keyProblem) return { path: keyProblem.path, message: (field) => keyProblem.message(`the property name ${JSON.stringify(field.slice(0, 80))}`) };
    const problem = checkValues((value as Record<string, unknown>)[key], [...path, key]);
    if (problem) return problem;
  }
  return null;
}

function checkText(text: string, path: Array<string | number>): ValueProblem | null {
  if (NUL.test(text)) return { path, message: (field) => `${field} must not contain a NUL character (\\u0000)` };
  if (!(text as WellFormed).isWellFormed()) {
    return { path, message: (field) => `${field} must not contain a lone surrogate (an unpaired \\uD800-\\uDFFF escape)` };
  }
  return null;
}

/** V8's message, without control characters and not too long for a client to read. */
function printable(message: string): string {
  const clean = message.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
