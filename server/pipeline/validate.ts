/**
 * Request validation from the registry: one compiled validator per operation and request part,
 * and messages that name the field in plain words (Ajv's own format never reaches a client).
 * Every violation is named at once (up to 10, in `invalidRequestMessage`), so a client fixes its
 * request in one go; an unknown property names the known one it most resembles.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { Operation } from '../../shared/operations/types.ts';
import { PATTERN_RULES } from '../../shared/schemas/filter-patterns.ts';
import { invalidRequestMessage } from '../lib/errors.ts';

export type RequestPart = 'params' | 'query' | 'body';

/** A failure names each violation (`problems`) and all of them in one sentence (`message`). */
export type Validation = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; problems: string[] };

export type Validate = (operationId: string, part: RequestPart, value: unknown) => Validation;

const PARTS: RequestPart[] = ['params', 'query', 'body'];

// `verbose` keeps the failing schema on each error: "exactly 2 characters" and the identifier list
// of an `anyOf` are read from it. `strictRequired` is off because the enrich body's `anyOf`
// branches each require a property that the parent schema, not the branch, declares. `allErrors`
// collects every violation, not just the first (a request's size is bounded by its schema).
const options: Options = { allErrors: true, useDefaults: false, verbose: true, strict: true, strictRequired: false };

/** An Ajv configured as the server validates, with the JSON Schema formats the registry uses. */
export function newAjv(extra: Options = {}): Ajv {
  const ajv = new Ajv({ ...options, ...extra });
  ajvFormats.default(ajv);
  // Known, not asserted here: the handlers check a CNPJ so that one `invalid_cnpj` names every bad one.
  ajv.addFormat('cnpj', true);
  // Likewise a partner's document (a CPF, masked or not, or a CNPJ): the company search checks it.
  ajv.addFormat('partner-document', true);
  return ajv;
}

/**
 * Compiles each request schema of the registry once, when its operation is first called:
 * compiling all of them took a quarter to half a second of every server's start (issue 35), and
 * a process calls few of them at first. validate.test.ts compiles every one, so a schema Ajv's
 * strict mode refuses still fails the tests. Path and query values arrive as strings, so their
 * validators coerce them to the declared types; bodies are JSON and are never coerced (Ajv only
 * coerces per instance, hence two instances).
 * A part the operation does not declare is not read: it validates as `{}`.
 */
export function compileValidators(operations: Record<string, Operation>): Validate {
  const strings = newAjv({ coerceTypes: true });
  const json = newAjv({});
  const validators = new Map<string, Partial<Record<RequestPart, ValidateFunction>>>();
  const compiled = (operationId: string): Partial<Record<RequestPart, ValidateFunction>> => {
    let parts = validators.get(operationId);
    if (parts) return parts;
    if (!Object.hasOwn(operations, operationId)) throw new Error(`No operation ${operationId} in the registry`);
    parts = {};
    for (const part of PARTS) {
      const schema = operations[operationId]!.request[part];
      if (schema) parts[part] = (part === 'body' ? json : strings).compile(schema);
    }
    validators.set(operationId, parts);
    return parts;
  };

  return (operationId, part, value) => {
    const check = compiled(operationId)[part];
    if (!check) return { ok: true, value: {} };
    // Coercion rewrites values in place: work on a copy of Koa's params and query.
    const data = part === 'body' ? value : { ...(value as object) };
    if (check(data)) {
      const infinite = part === 'body' ? null : nonFinite(data, '');
      return infinite === null ? { ok: true, value: data as Record<string, unknown> } : failure([`${fieldPath(infinite) || part} must be a finite number`]);
    }
    const errors = reported(check.errors ?? []);
    return failure(errors.length > 0 ? errors.map((error) => describe(error, part)) : [`${part} is invalid`]);
  };
}

const failure = (problems: string[]): Validation => ({ ok: false, message: invalidRequestMessage(problems), problems: [...new Set(problems)] });

/**
 * The errors to report, in order: each failed `anyOf` once (by the branch that says most, see
 * `branchErrors`), never the errors of its rejected branches on their own; and a value of the
 * wrong type once, by its type (its `enum` or `pattern` say nothing more to whoever sent it).
 */
function reported(errors: ErrorObject[]): ErrorObject[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const inBranch = (e: ErrorObject) => anyOfs.some((a) => a !== e && within(e, a, ''));
  const mistyped = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  const beside = (e: ErrorObject) => e.keyword !== 'type' && e.keyword !== 'anyOf' && mistyped.has(e.instancePath);
  // A value of the wrong length (a state of 9 letters) is not said again to break its pattern.
  const sized = new Set(errors.filter((e) => e.keyword === 'minLength' || e.keyword === 'maxLength').map((e) => e.instancePath));
  const patternBeside = (e: ErrorObject) => e.keyword === 'pattern' && sized.has(e.instancePath);
  // An `if` that held and a `then` that failed (a job's items, by its operation): the `then`'s own errors say what.
  // A property name outside `propertyNames` is said once, by its `propertyNames` error, not again by the rule it broke.
  const conditional = (e: ErrorObject) => e.keyword === 'if' || e.propertyName !== undefined;
  return errors.flatMap((e) => (inBranch(e) || beside(e) || patternBeside(e) || conditional(e) ? [] : e.keyword === 'anyOf' ? branchErrors(errors, e) : [e]));
}

/** Whether `e` comes from the schema under `a` (at `branch`) and from the value `a` checked. */
function within(e: ErrorObject, a: ErrorObject, branch: string): boolean {
  const value = e.instancePath === a.instancePath || e.instancePath.startsWith(`${a.instancePath}/`);
  return value && e.schemaPath.startsWith(`${a.schemaPath}/${branch}`);
}

/**
 * The pointer to a number that is not finite, if any. Ajv coerces the strings `Infinity`,
 * `-Infinity` and `1e309` to numbers and then skips `minimum` and `maximum`, which only compare
 * finite numbers: `limit=Infinity` would pass a `maximum: 100`. A field declared as a string keeps
 * its text, so any such number came from a numeric field.
 */
function nonFinite(value: unknown, pointer: string): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : pointer;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinite(item, `${pointer}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
    if (found !== null) return found;
  }
  return null;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'a JSON object',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'a valid email',
  uri: 'a valid URI',
  uuid: 'a UUID',
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date and time (ISO 8601)',
};

/** One sentence naming the field, e.g. `limit must be <= 25` or `columns[0].label is required`. */
function describe(error: ErrorObject, part: RequestPart): string {
  const at = fieldPath(error.instancePath);
  const field = at || part;
  const params = error.params as Record<string, unknown>;
  const limit = params.limit as number;
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(at, String(params.missingProperty))} is required`;
    case 'additionalProperties': {
      const unknown = String(params.additionalProperty);
      const known = Object.keys((parent.properties ?? {}) as object);
      const like = closest(unknown, known);
      return `unknown property ${join(at, unknown)}${like ? `: did you mean ${join(at, like)}?` : ''}`;
    }
    case 'propertyNames': {
      const name = String(params.propertyName);
      const names = ((parent.propertyNames as { enum?: unknown[] } | undefined)?.enum ?? []).map(String);
      const like = closest(name, names);
      return `unknown property ${join(at, name)}${like ? `: did you mean ${join(at, like)}?` : ''}`;
    }
    case 'type':
      return `${field} must be ${TYPE_NAMES[String(params.type)] ?? String(params.type)}`;
    case 'enum':
      return `${field} must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return `${field} must be ${FORMAT_NAMES[String(params.format)] ?? `in the format ${String(params.format)}`}`;
    case 'minLength':
    case 'maxLength':
      if (parent.minLength === parent.maxLength) return `${field} must be exactly ${plural(limit, 'character')}`;
      if (error.keyword === 'maxLength') return `${field} must be at most ${plural(limit, 'character')}`;
      return limit === 1 ? `${field} must not be empty` : `${field} must be at least ${plural(limit, 'character')}`;
    case 'minItems':
      return `${field} must have at least ${plural(limit, 'item')}`;
    case 'maxItems':
      return `${field} must have at most ${plural(limit, 'item')}`;
    case 'minProperties':
      return `${field} must have at least ${plural(limit, 'field')}`;
    case 'pattern': {
      if (params.pattern === '\\S') return `${field} must not be blank`;
      const rule = PATTERN_RULES[String(params.pattern)];
      return rule ? `${field} must ${rule}` : `${field} must match ${String(params.pattern)}`;
    }
    case 'minimum':
    case 'maximum':
      return `${field} must be ${String(params.comparison)} ${limit}`;
    case 'anyOf': {
      const alternatives = requiredAlternatives(error.schema);
      if (alternatives?.every((names) => names.length === 1)) return `at least one of ${alternatives.map(([name]) => join(at, name!)).join(', ')} is required`;
      if (alternatives) return `${alternatives.map((names) => names.map((name) => join(at, name)).join(' and ')).join(', or ')} is required`;
      const types = typeAlternatives(error.schema);
      if (types) return `${field} must be ${types.join(' or ')}`;
      return `${field} is invalid`;
    }
    default:
      return `${field} is invalid`;
  }
}

/** `/rows/3/values/E~1mail` → `rows[3].values.E/mail`. */
function fieldPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += /^\d+$/.test(segment) ? `[${segment}]` : path ? `.${segment}` : segment;
  }
  return path;
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * The known name an unknown one most resembles (`simplesOption` → `simpleOption`), if one is
 * close: case ignored, at most a third of its letters (and at least 1, at most 3) edited.
 */
export function closest(unknown: string, known: string[]): string | undefined {
  const wanted = unknown.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(wanted, name.toLowerCase());
    if (!best || distance < best.distance) best = { name, distance };
  }
  const allowed = Math.min(3, Math.max(1, Math.floor(unknown.length / 3)));
  return best && best.distance <= allowed ? best.name : undefined;
}

/** Levenshtein distance, with an adjacent swap counting as one edit. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3 || a.length > 100 || b.length > 100) return Infinity;
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The error to report for a failed `anyOf`. When its branches differ by type and the value has the
 * type of one of them (an array where a list or an object of lists is allowed), that branch's own
 * error says more (`providerOrder[1] must be a string`) than "must be an array or a JSON object".
 */
function branchErrors(errors: ErrorObject[], anyOf: ErrorObject): ErrorObject[] {
  if (!Array.isArray(anyOf.schema)) return [anyOf];
  const value = anyOf.data;
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  const at = (anyOf.schema as Array<Record<string, unknown>>).findIndex((branch) => branch.type === kind);
  if (at === -1) return [anyOf];
  const inner = reported(errors.filter((e) => e !== anyOf && within(e, anyOf, `${at}/`)));
  return inner.length > 0 ? inner : [anyOf];
}

/** `a string or null`, for an `anyOf` of types (a nullable field), when a value is none of them. */
function typeAlternatives(branches: unknown): string[] | null {
  if (!Array.isArray(branches)) return null;
  const names = (branches as Array<Record<string, unknown>>).map((branch) => TYPE_NAMES[String(branch.type)]);
  return names.every((name) => name !== undefined) ? (names as string[]) : null;
}

/**
 * The names of an `anyOf` whose branches each only require properties (the enrich body: one each;
 * a new campaign: `templateId`, or `name` and `offering`).
 */
function requiredAlternatives(branches: unknown): string[][] | null {
  if (!Array.isArray(branches)) return null;
  const alternatives: string[][] = [];
  for (const branch of branches as Array<Record<string, unknown>>) {
    const required = branch.required;
    if (Object.keys(branch).length !== 1 || !Array.isArray(required) || required.length === 0) return null;
    alternatives.push(required.map(String));
  }
  return alternatives;
}
