/**
 * Values the embedded store keeps: JSON values plus Dates (and non-finite numbers, which JSON
 * cannot spell). Anything else (ObjectId, Buffer, Map, class instances) is refused when it is
 * written rather than silently changed, because the journal could not give it back as it was.
 *
 * The journal encoding is JSON with two tags, `{"$date": ms}` and `{"$number": "NaN"}`. MongoDB
 * does not allow `$`-prefixed field names in documents, so the tags cannot collide with data.
 */

export interface Doc {
  _id: string;
  [field: string]: unknown;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function unsupported(value: object): never {
  const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
  throw new TypeError(`The embedded store cannot store a ${name} value (only JSON values and Dates)`);
}

/** Deep copy, so no object is ever shared between the store and a caller. */
export function cloneValue<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return new Date(value.getTime()) as T;
  if (Array.isArray(value)) return value.map(cloneValue) as T;
  if (!isPlainObject(value)) unsupported(value);
  // A spread copies the source's layout (its properties in the object itself): half the memory
  // of an object grown key by key, and faster, which counts for a million stored documents.
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key in copy) {
    const field = copy[key];
    if (typeof field === 'object' && field !== null) copy[key] = cloneValue(field);
  }
  return copy as T;
}

/** `value` with its Dates and non-finite numbers as their tags; anything else not JSON refused. */
function tagged(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $number: String(value) };
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return { $date: value.getTime() };
  if (Array.isArray(value)) return value.map(tagged);
  if (!isPlainObject(value)) unsupported(value);
  const copy: Record<string, unknown> = {};
  for (const key in value) copy[key] = tagged((value as Record<string, unknown>)[key]);
  return copy;
}

/** Whether a value holds anything plain JSON would not give back as it was. */
function needsTags(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(needsTags);
  if (!isPlainObject(value)) return true; // Dates, and anything the replacer must refuse
  for (const key in value) if (needsTags((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * Only a value that needs tags is copied with them first; scanning for them costs far less. A
 * replacer would take JSON.stringify off V8's fast path: it was 40% of a bulk import's time, and
 * 2 to 3 times the copy's cost for an account's document.
 */
export function encode(value: unknown): string {
  return JSON.stringify(needsTags(value) ? tagged(value) : value);
}

/**
 * A value its writer vouches holds no Date, no non-finite number and nothing but plain objects
 * and arrays (an import's documents, built from text by its own code): the same bytes as
 * {@link encode} without scanning for tags first. The compiler refuses a type holding a Date;
 * the writer's tests check the rest against `encode`.
 */
export function encodeUntagged<T>(value: T & Untagged<T>): string {
  return JSON.stringify(value);
}

/** A type no part of which is a Date (the one tagged value a type can show). */
export type Untagged<T> = T extends Date
  ? never
  : T extends ReadonlyArray<infer U>
    ? ReadonlyArray<Untagged<U>>
    : T extends object
      ? { [K in keyof T]: Untagged<T[K]> }
      : T;

/** A parsed value with its tags turned back into what they stand for, in place. */
function untag(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = untag(value[i]);
    return value;
  }
  const tagged = value as { $date?: unknown; $number?: unknown };
  if (typeof tagged.$date === 'number' && Object.keys(value).length === 1) return new Date(tagged.$date);
  if (typeof tagged.$number === 'string' && Object.keys(value).length === 1) return Number(tagged.$number);
  for (const key in value) (value as Record<string, unknown>)[key] = untag((value as Record<string, unknown>)[key]);
  return value;
}

/**
 * Text without tags cannot need them undone; with some, they are undone by a walk after a plain
 * parse, which costs a fraction of a reviver (a call per value, inside the parse).
 */
export function decode(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return text.includes('"$date"') || text.includes('"$number"') ? untag(value) : value;
}
