/**
 * A native test for the filters repositories write most: equality, `$ne`, `$in`, `$nin`, ranges,
 * `$exists`, `$all`, `$not`, `$and`, `$or` and `$nor` over strings, numbers, booleans, null and
 * Dates, on dotted paths through embedded documents and arrays. mingo answers the same questions,
 * but at microseconds a document, which a scan of a large table cannot afford.
 *
 * It follows MongoDB's rules: an array matches when an element does (`$ne` and `$nin` when none
 * does), a path continues into every document of an array on its way, comparisons hold only
 * between values of one type, null equals a missing field, and `$all` is an `$and` of equalities
 * (so it also matches a field holding the one value, where mingo wants an array). It is
 * conservative: whatever else a filter uses (regexes, `$elemMatch`, `$size`, `$type`, `$expr`,
 * documents or arrays as values, positional paths, NaN, strings whose order JavaScript and MongoDB
 * may disagree on) is left to mingo, clause by clause, as is a document where null or `$exists`
 * meets an array on the path.
 */
import { Query } from 'mingo';
import type { Doc } from './codec.ts';

/**
 * A string whose order against any other is the same in JavaScript (UTF-16 code units) and in
 * MongoDB (UTF-8 bytes): it has no code unit from U+D800 up.
 */
const safeString = (value: unknown): value is string => typeof value === 'string' && !/[\uD800-\uFFFF]/.test(value);

/** Whether a document matches; undefined when the native check cannot tell. */
type Verdict = boolean | undefined;

export type Predicate = (doc: Doc) => boolean;

/** A condition on one path, checked on what the path reaches: a value, or the values past an array. */
type Check = (at: unknown) => Verdict;

const isDocument = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** The values a path reaches once it has met an array of documents. */
class Spread {
  constructor(readonly values: unknown[]) {}
}

function resolve(doc: Doc, path: string[]): unknown {
  let value: unknown = doc;
  for (let i = 0; i < path.length; i++) {
    if (Array.isArray(value)) return new Spread(collect(value, path, i, []));
    if (!isDocument(value)) return undefined;
    value = value[path[i]!];
  }
  return value;
}

/** Nested arrays are not entered on the way: MongoDB looks one array deep at each step. */
function collect(value: unknown, path: string[], depth: number, out: unknown[]): unknown[] {
  if (depth === path.length) out.push(value);
  else if (isDocument(value)) collect(value[path[depth]!], path, depth + 1, out);
  else if (Array.isArray(value)) for (const element of value) if (isDocument(element)) collect(element, path, depth, out);
  return out;
}

/** mingo's test of a clause (which throws here, as MongoDB would, if the clause is invalid). */
function mingo(clause: Record<string, unknown>): Predicate {
  const query = new Query(clause);
  return (doc) => query.test(doc);
}

function all(checks: Check[]): Check {
  if (checks.length === 1) return checks[0]!;
  return (x) => {
    let verdict: Verdict = true;
    for (const check of checks) {
      const v = check(x);
      if (v === false) return false;
      if (v === undefined) verdict = undefined;
    }
    return verdict;
  };
}

function not(check: Check): Check {
  return (x) => {
    const v = check(x);
    return v === undefined ? undefined : !v;
  };
}

/**
 * A condition met when the value, or an element of it when it is an array, `matches`. MongoDB's
 * rules for null and missing values past an array are subtle, so `nullish` conditions leave them.
 */
function atom(matches: (value: unknown) => boolean, nullish: boolean): Check {
  const leaf = (value: unknown) => matches(value) || (Array.isArray(value) && value.some(matches));
  return (at) => (at instanceof Spread ? (nullish ? undefined : at.values.some(leaf)) : leaf(at));
}

const validDate = (value: unknown): value is Date => value instanceof Date && !Number.isNaN(value.getTime());

function membership(values: unknown[]): Check | undefined {
  const [only] = values;
  if (values.length === 1 && (typeof only === 'string' || typeof only === 'boolean' || (typeof only === 'number' && !Number.isNaN(only)))) {
    return atom((x) => x === only, false);
  }
  const plain = new Set<unknown>();
  const times = new Set<number>();
  let nulls = false;
  for (const value of values) {
    if (value === null) nulls = true;
    else if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && !Number.isNaN(value))) plain.add(value);
    else if (validDate(value)) times.add(value.getTime());
    else return undefined;
  }
  return atom(
    (x) => plain.has(x) || (x instanceof Date ? times.has(x.getTime()) : nulls && (x === null || x === undefined)),
    nulls,
  );
}

const COMPARISONS: Record<string, (a: number | string, b: number | string) => boolean> = {
  $gt: (a, b) => a > b,
  $gte: (a, b) => a >= b,
  $lt: (a, b) => a < b,
  $lte: (a, b) => a <= b,
};

function comparison(op: string, bound: unknown): Check | undefined {
  const compare = COMPARISONS[op]!;
  if (typeof bound === 'number' && !Number.isNaN(bound)) return atom((x) => typeof x === 'number' && compare(x, bound), false);
  if (safeString(bound)) return atom((x) => typeof x === 'string' && compare(x, bound), false);
  if (validDate(bound)) {
    const time = bound.getTime();
    return atom((x) => x instanceof Date && compare(x.getTime(), time), false);
  }
  return undefined;
}

const exists: Check = (at) => (at instanceof Spread ? undefined : at !== undefined);

const isOperators = (condition: unknown): condition is Record<string, unknown> =>
  isDocument(condition) && Object.keys(condition).length > 0 && Object.keys(condition).every((key) => key.startsWith('$'));

function operator(op: string, operand: unknown): Check | undefined {
  switch (op) {
    case '$eq':
      return membership([operand]);
    case '$ne': {
      const check = membership([operand]);
      return check && not(check);
    }
    case '$in':
      return Array.isArray(operand) ? membership(operand) : undefined;
    case '$nin': {
      const check = Array.isArray(operand) ? membership(operand) : undefined;
      return check && not(check);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return comparison(op, operand);
    case '$exists':
      return typeof operand === 'boolean' ? (operand ? exists : not(exists)) : undefined;
    case '$all': {
      if (!Array.isArray(operand) || operand.length === 0 || operand.includes(null)) return undefined;
      const checks = operand.map((value) => membership([value]));
      return checks.every((check) => check !== undefined) ? all(checks as Check[]) : undefined;
    }
    case '$not': {
      const check = isOperators(operand) ? operators(operand) : undefined;
      return check && not(check);
    }
    default:
      return undefined;
  }
}

function operators(condition: Record<string, unknown>): Check | undefined {
  const checks: Check[] = [];
  for (const [op, operand] of Object.entries(condition)) {
    const check = operator(op, operand);
    if (!check) return undefined;
    checks.push(check);
  }
  return all(checks);
}

/** Whether a path has no positional steps, nor names a document would inherit (`constructor`) when it lacks them. */
const plainPath = (segments: string[]) => segments.every((s) => s !== '' && !s.startsWith('$') && !/^\d+$/.test(s) && !(s in Object.prototype));

function field(path: string, condition: unknown): Predicate {
  const segments = path.split('.');
  if (!plainPath(segments)) return mingo({ [path]: condition });
  const clauses: Array<[Check, Record<string, unknown>]> = [];
  // Operators on one path are independent conditions, but for a few pairs (`$regex` and
  // `$options`) that mingo gets together.
  const left: Record<string, unknown> = {};
  if (isOperators(condition)) {
    for (const [op, operand] of Object.entries(condition)) {
      const check = operator(op, operand);
      if (check) clauses.push([check, { [path]: { [op]: operand } }]);
      else left[op] = operand;
    }
  } else {
    const check = isDocument(condition) ? undefined : membership([condition]);
    if (!check) return mingo({ [path]: condition });
    clauses.push([check, { [path]: condition }]);
  }
  const reach = segments.length === 1 ? (doc: Doc) => doc[path] : (doc: Doc) => resolve(doc, segments);
  const tests = clauses.map(([check, clause]) => {
    // Only set up when a document needs it: a Query costs more than a hot lookup takes.
    let fallback: Predicate | undefined;
    return (at: unknown, doc: Doc) => check(at) ?? (fallback ??= mingo(clause))(doc);
  });
  const rest = Object.keys(left).length > 0 ? mingo({ [path]: left }) : undefined;
  if (tests.length === 1 && !rest) return (doc) => tests[0]!(reach(doc), doc);
  return (doc) => {
    const at = reach(doc);
    return tests.every((test) => test(at, doc)) && (!rest || rest(doc));
  };
}

function logical(op: string, operand: unknown): Predicate {
  if (!['$and', '$or', '$nor'].includes(op) || !Array.isArray(operand) || operand.length === 0 || !operand.every(isDocument)) {
    return mingo({ [op]: operand });
  }
  const parts = operand.map(compilePredicate);
  if (op === '$and') return (doc) => parts.every((part) => part(doc));
  if (op === '$or') return (doc) => parts.some((part) => part(doc));
  return (doc) => !parts.some((part) => part(doc));
}

/** The test for `filter`: native where this module can, mingo for the rest. */
export function compilePredicate(filter: Record<string, unknown>): Predicate {
  const tests = Object.entries(filter).map(([key, condition]) => (key.startsWith('$') ? logical(key, condition) : field(key, condition)));
  if (tests.length === 1) return tests[0]!;
  return (doc) => tests.every((test) => test(doc));
}
