/**
 * Writing documents: update operators (through mingo), upserts and replacements, with MongoDB's
 * rules. Every function returns a new document and leaves its inputs untouched.
 */
import { randomUUID } from 'node:crypto';
// From the package's root, not `mingo/updater`: madge (check:cycles) cannot resolve a subpath export,
// and skipped this file with a warning.
import { update as applyOperators } from 'mingo';
import type { Document } from '../port.ts';
import { cloneValue, type Doc } from './codec.ts';
import { plainUpdate } from './plain-update.ts';

type Modifier = Parameters<typeof applyOperators>[1];

/** MongoDB's code for an attempt to change a document's `_id`. */
const IMMUTABLE_FIELD = 66;

export class ImmutableIdError extends Error {
  readonly code = IMMUTABLE_FIELD;
}

function assertOperators(update: Document): void {
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys.every((key) => key.startsWith('$'))) {
    throw new Error('Update document requires atomic operators');
  }
}

function assertString(id: unknown): asserts id is string {
  if (typeof id !== 'string') throw new TypeError(`The embedded store requires a string _id (got ${typeof id})`);
}

function run(doc: Record<string, unknown>, modifier: Document, arrayFilters?: Document[], filter?: Document): boolean {
  if (Object.keys(modifier).length === 0) return false;
  const plain = arrayFilters || filter ? undefined : plainUpdate(doc, modifier);
  if (plain !== undefined) return plain;
  // Deep clone mode: values taken from the update must not stay shared with the caller.
  return applyOperators(doc, modifier as Modifier, arrayFilters, filter, { cloneMode: 'deep' }).length > 0;
}

function usesPositional(operators: Document): boolean {
  return Object.values(operators).some(
    (fields) => typeof fields === 'object' && fields !== null && Object.keys(fields).some((path) => /(^|\.)\$(\.|$)/.test(path)),
  );
}

/**
 * Takes `_id` out of a `$set`-like operand: mingo refuses the path even when the value stays the
 * same, where MongoDB only refuses a change.
 */
function splitId(fields: unknown): [unknown, Document | undefined] {
  if (typeof fields !== 'object' || fields === null || !('_id' in fields)) return [undefined, fields as Document | undefined];
  const { _id, ...rest } = fields as Document;
  return [_id, rest];
}

function immutableId(): ImmutableIdError {
  return new ImmutableIdError("Performing an update on the path '_id' would modify the immutable field '_id'");
}

/** The document after `update`, or undefined when the update changes nothing. */
export function updated(doc: Doc, update: Document, filter: Document, arrayFilters?: Document[]): Doc | undefined {
  assertOperators(update);
  const { $setOnInsert: _onInsertOnly, $set, ...others } = update;
  const [newId, set] = splitId($set);
  if (newId !== undefined && newId !== doc._id) throw immutableId();
  const operators = set ? { ...others, $set: set } : others;
  const next = cloneValue(doc);
  // mingo needs the filter only to resolve the positional `$`; testing it again costs a compile.
  return run(next, operators, arrayFilters, usesPositional(operators) ? filter : undefined) ? next : undefined;
}

/** Equality conditions of a filter, which MongoDB copies into a document it upserts. */
function equalities(filter: Document, into: Record<string, unknown>): Record<string, unknown> {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) equalities(clause as Document, into);
    } else if (field.startsWith('$') || condition instanceof RegExp) {
      continue;
    } else if (typeof condition === 'object' && condition !== null && !(condition instanceof Date) && !Array.isArray(condition)) {
      const keys = Object.keys(condition);
      if (!keys.some((k) => k.startsWith('$'))) into[field] = condition;
      else if ('$eq' in condition) into[field] = (condition as { $eq: unknown }).$eq;
    } else {
      into[field] = condition;
    }
  }
  return into;
}

/** The document an upsert inserts: the filter's equalities, then `$setOnInsert`, then the update. */
export function upserted(filter: Document, update: Document, arrayFilters?: Document[]): Doc {
  assertOperators(update);
  const { $setOnInsert, $set, ...others } = update;
  const [onInsertId, onInsert] = splitId($setOnInsert);
  const [setId, set] = splitId($set);
  const { _id: filterId, ...seed } = equalities(filter, {});
  const doc: Record<string, unknown> = {};
  run(doc, { $set: seed });
  if (onInsert) run(doc, { $set: onInsert });
  run(doc, set ? { ...others, $set: set } : others, arrayFilters);
  const id = setId ?? onInsertId ?? filterId ?? randomUUID();
  assertString(id);
  return { _id: id, ...doc };
}

/** A replacement for the document with `id` (or, for an upsert, a new one matching `filter`). */
export function replaced(replacement: Document, id: string | undefined, filter: Document): Doc {
  if (Object.keys(replacement).some((key) => key.startsWith('$'))) {
    throw new Error('Replacement document must not contain atomic operators');
  }
  const given = replacement._id;
  const resolved = id ?? given ?? equalities(filter, {})._id ?? randomUUID();
  if (given !== undefined && given !== resolved) throw immutableId();
  assertString(resolved);
  const { _id: _ignored, ...fields } = replacement;
  return { _id: resolved, ...cloneValue(fields) };
}

/** A copy of a document to insert, with a generated `_id` when it has none. */
export function inserted(doc: Document): Doc {
  const copy = cloneValue(doc) as Record<string, unknown>;
  copy._id ??= randomUUID();
  assertString(copy._id);
  return copy as Doc;
}
