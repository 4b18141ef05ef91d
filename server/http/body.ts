/**
 * Reads a JSON request body, only when an operation that takes one asks for it (so routing, the
 * method, the credential and the rate limit are decided before any byte is read or parsed).
 *
 * Every way a body can be wrong is a 4xx that names the cause, never a 500:
 * - another media type or charset → 415; a `Content-Encoding` other than gzip, deflate, br or
 *   identity → 415;
 * - more than the operation takes (1 MiB unless its entry says more: `bodyLimitOf`), as sent or
 *   once decompressed (no zip bombs) → 413;
 * - a compressed body that does not decompress, bytes that are not UTF-8 → 400;
 * - JSON nested deeper than MAX_JSON_DEPTH or an object of more than MAX_OBJECT_KEYS keys → 400,
 *   found by a scan of the text before `JSON.parse` builds anything;
 * - malformed JSON (V8's message, which says where), a `__proto__` key, a NUL character or a lone
 *   surrogate in any string, a number JSON cannot carry back (1e309) → 400 naming the field.
 * An empty body is treated as absent, so "all optional" bodies may be omitted.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DEFAULT_BODY_BYTES } from '../../shared/operations/types.ts';
import { ServiceError, invalidRequest } from '../errors.ts';
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
  if (!ctx.is('application/json', '+json')) {
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
export async function readCapped(ctx: AppContext, maxBytes = MAX_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      // The rest is not read: the connection cannot carry another request after it.
      ctx.set('Connection', 'close');
      throw new ServiceError('payload_too_large', tooLarge(maxBytes));
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
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

/** Bytes → JSON value, or a 400 naming what is wrong. Exported for the other binding (MCP). */
export function parseJsonBody(bytes: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw invalidRequest('The body is not valid UTF-8: send JSON text encoded in UTF-8.');
  }
  if (text === '') return undefined;
  if (text.trim() === '') throw invalidRequest('The body holds only whitespace: send a JSON value, or no body at all.');
  const limit = scanLimits(text);
  if (limit) throw invalidRequest(limit);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`The body is not valid JSON: ${printable((err as Error).message)}.`);
  }
  const problem = checkValues(value, '');
  if (problem) throw invalidRequest(problem);
  return value;
}

/**
 * One pass over the text counting nesting and the keys of each open object (a `:` outside a
 * string is a key in valid JSON; invalid JSON is left to JSON.parse). Costs a fraction of the parse.
 */
function scanLimits(text: string): string | null {
  const keys = new Int32Array(MAX_JSON_DEPTH + 2);
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return `The body is nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays.`;
      keys[depth] = 0;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x3a && depth > 0) {
      if (++keys[depth]! > MAX_OBJECT_KEYS) return `The body has an object with more than ${MAX_OBJECT_KEYS} keys.`;
    }
  }
  return null;
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

/** The first value no operation may receive, as a message naming where it is; null if none. */
function checkValues(value: unknown, at: string): string | null {
  if (typeof value === 'string') return checkText(value, at || 'the body');
  if (typeof value === 'number') {
    return Number.isFinite(value) ? null : `${at || 'the body'} is a number too large to represent`;
  }
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = checkValues(value[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const field = at ? `${at}.${key}` : key;
    if (key === '__proto__') return `${at || 'the body'} must not have a property named __proto__`;
    const keyProblem = checkText(key, `the property name ${JSON.stringify(field.slice(0, 80))}`);
    if (keyProblem) return keyProblem;
    const problem = checkValues((value as Record<string, unknown>)[key], field);
    if (problem) return problem;
  }
  return null;
}

function checkText(text: string, field: string): string | null {
  if (NUL.test(text)) return `${field} must not contain a NUL character (\\u0000)`;
  if (!(text as WellFormed).isWellFormed()) return `${field} must not contain a lone surrogate (an unpaired \\uD800-\\uDFFF escape)`;
  return null;
}

/** V8's message, without control characters and not too long for a client to read. */
function printable(message: string): string {
  const clean = message.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
