/**
 * The update operators most writes use (`$set`, `$inc`, `$unset` on paths through documents; `$push`
 * of one value; `$pull` of the elements matching a document of plain values, as the ledger's outbox
 * does), applied without mingo. Each mingo update builds a fresh operator context, copying its
 * operator tables, which cost more than the write itself on a charged request (a charge made two:
 * 2 of its 2.5 ms in the server). Anything else, and every case where MongoDB refuses or reads a
 * path or a value specially (an array or a non-document on the path, an all-digit or `$` segment,
 * overlapping paths, `$inc` of a non-number, `$push` modifiers or onto a non-array, a `$pull`
 * condition with operators, nulls or nested values, or elements it would compare as arrays or
 * documents), is left to mingo, which has MongoDB's answers for those: this module answers
 * `undefined` before changing anything.
 */
import type { Document } from '../port.ts';
import { cloneValue, encode } from './codec.ts';

type Fields = Record<string, unknown>;

const PLAIN_OPERATORS = new Set(['$set', '$inc', '$unset', '$push', '$pull']);
/** Not `$…`, and not all digits (an array's index, to MongoDB, where an array is met): `2026-11-27` is a field. */
const PLAIN_SEGMENT = /^(?!\d+$)[^$.][^.]*$/;

const isDocument = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** Applies `operators` to `doc` in place: whether it changed, or undefined for mingo to do it. */
export function plainUpdate(doc: Fields, operators: Document): boolean | undefined {
  const entries = Object.entries(operators);
  const paths: string[] = [];
  for (const [operator, fields] of entries) {
    if (!PLAIN_OPERATORS.has(operator) || !isDocument(fields)) return undefined;
    for (const [path, value] of Object.entries(fields)) {
      const segments = path.split('.');
      if (value === undefined || segments[0] === '_id' || !segments.every((segment) => PLAIN_SEGMENT.test(segment))) return undefined;
      if (operator === '$inc' && typeof value !== 'number') return undefined;
      const at = walk(doc, path);
      if (at === null) return undefined;
      if (operator === '$inc' && at.value !== undefined && typeof at.value !== 'number') return undefined;
      if (operator === '$push' && !pushable(at.value, value)) return undefined;
      if (operator === '$pull' && !pullable(at.value, value)) return undefined;
      paths.push(path);
    }
  }
  paths.sort();
  for (let i = 1; i < paths.length; i++) if (paths[i] === paths[i - 1] || paths[i]!.startsWith(`${paths[i - 1]}.`)) return undefined;

  let changed = false;
  for (const [operator, fields] of entries) {
    for (const [path, value] of Object.entries(fields as Fields)) {
      const segments = path.split('.');
      const last = segments.pop()!;
      if (operator === '$unset') {
        const parent = segments.length === 0 ? doc : walk(doc, segments.join('.'))?.value;
        if (isDocument(parent) && last in parent) {
          delete parent[last];
          changed = true;
        }
        continue;
      }
      if (operator === '$pull') {
        const parent = segments.length === 0 ? doc : walk(doc, segments.join('.'))?.value;
        const list = isDocument(parent) ? parent[last] : undefined;
        if (!isDocument(parent) || !Array.isArray(list)) continue;
        const kept = list.filter((element: Fields) => !matches(element, value as Fields));
        if (kept.length < list.length) {
          parent[last] = kept;
          changed = true;
        }
        continue;
      }
      const parent = created(doc, segments);
      const before = parent[last];
      if (operator === '$push') {
        parent[last] = [...((before as unknown[] | undefined) ?? []), cloneValue(value)];
        changed = true;
      } else if (operator === '$inc') {
        parent[last] = ((before as number | undefined) ?? 0) + (value as number);
        changed ||= before === undefined || value !== 0;
      } else {
        const after = cloneValue(value);
        // BSON equality: the same values with their keys in the same order.
        changed ||= before === undefined || encode(before) !== encode(after);
        parent[last] = after;
      }
    }
  }
  return changed;
}

/** `$push` of one value (not `$each` and its modifiers) onto an array or a missing field. */
const pushable = (list: unknown, value: unknown): boolean =>
  (list === undefined || Array.isArray(list)) && !(isDocument(value) && Object.keys(value).some((name) => name.startsWith('$')));

/** A value `$pull` compares as such: no array, document or null, which MongoDB's queries read specially. */
const isScalar = (value: unknown): boolean =>
  value instanceof Date || typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value)) || typeof value === 'boolean';

/**
 * Whether `$pull` of `condition` from `list` is taken here: the condition a document of scalars
 * (no operators), the list absent or an array of documents holding scalars (or nothing) at the
 * condition's fields (how a query matches other elements is mingo's).
 */
function pullable(list: unknown, condition: unknown): boolean {
  if (!isDocument(condition)) return false;
  const fields = Object.entries(condition);
  if (fields.length === 0 || !fields.every(([name, value]) => PLAIN_SEGMENT.test(name) && isScalar(value))) return false;
  if (list === undefined) return true;
  if (!Array.isArray(list)) return false;
  return list.every((element) => isDocument(element) && fields.every(([name]) => element[name] === undefined || isScalar(element[name])));
}

/** Whether a list element matches a `$pull` condition pullable() took: each field equal. */
function matches(element: Fields, condition: Fields): boolean {
  for (const [name, wanted] of Object.entries(condition)) {
    const value = element[name];
    if (wanted instanceof Date ? !(value instanceof Date) || value.getTime() !== wanted.getTime() : value !== wanted) return false;
  }
  return true;
}

/**
 * What `path` leads to, `{ value: undefined }` where it stops at a missing field, or null where it
 * goes through something other than a document (MongoDB's errors and array paths are mingo's).
 */
function walk(doc: Fields, path: string): { value: unknown } | null {
  let at: unknown = doc;
  for (const segment of path.split('.')) {
    if (at === undefined) return { value: undefined };
    if (!isDocument(at)) return null;
    at = at[segment];
  }
  return { value: at };
}

/** The document at `segments`, created where missing (walk() has checked that nothing else is in the way). */
function created(doc: Fields, segments: string[]): Fields {
  let at = doc;
  for (const segment of segments) at = (at[segment] ??= {}) as Fields;
  return at;
}
