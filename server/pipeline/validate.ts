/**
 * Request validation from the registry: one compiled validator per operation and request part,
 * and messages that name the field in plain words (Ajv's own format never reaches a client).
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { Operation } from '../../shared/operations/types.ts';

export type RequestPart = 'params' | 'query' | 'body';

export type Validation = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

export type Validate = (operationId: string, part: RequestPart, value: unknown) => Validation;

const PARTS: RequestPart[] = ['params', 'query', 'body'];

// `verbose` keeps the failing schema on each error: "exactly 2 characters" and the identifier list
// of an `anyOf` are read from it. `strictRequired` is off because the enrich body's `anyOf`
// branches each require a property that the parent schema, not the branch, declares.
const options: Options = { allErrors: false, useDefaults: false, verbose: true, strict: true, strictRequired: false };

/** An Ajv configured as the server validates, with the JSON Schema formats the registry uses. */
export function newAjv(extra: Options = {}): Ajv {
  const ajv = new Ajv({ ...options, ...extra });
  ajvFormats.default(ajv);
  // Known, not asserted here: the handlers check a CNPJ so that one `invalid_cnpj` names every bad one.
  ajv.addFormat('cnpj', true);
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
      return infinite === null ? { ok: true, value: data as Record<string, unknown> } : { ok: false, message: `${fieldPath(infinite) || part} must be a finite number` };
    }
    // Without allErrors, the last error is the one that failed; those before it come from the
    // rejected branches of an `anyOf`.
    const error = check.errors ? branchError(check.errors) : undefined;
    return { ok: false, message: error ? describe(error, part) : `${part} is invalid` };
  };
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
    case 'additionalProperties':
      return `unknown property ${join(at, String(params.additionalProperty))}`;
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
    case 'pattern':
      return params.pattern === '\\S' ? `${field} must not be blank` : `${field} must match ${String(params.pattern)}`;
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
 * The error to report. When an `anyOf` failed whose branches differ by type and the value has the
 * type of one of them (an array where a list or an object of lists is allowed), that branch's own
 * error says more (`providerOrder[1] must be a string`) than "must be an array or a JSON object".
 */
function branchError(errors: ErrorObject[]): ErrorObject | undefined {
  const last = errors.at(-1);
  if (!last || last.keyword !== 'anyOf' || !Array.isArray(last.schema)) return last;
  const value = last.data;
  const kind = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  const at = (last.schema as Array<Record<string, unknown>>).findIndex((branch) => branch.type === kind);
  if (at === -1) return last;
  const inner = errors.filter((e) => e !== last && e.schemaPath.startsWith(`${last.schemaPath}/${at}/`));
  return inner.at(-1) ?? last;
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
