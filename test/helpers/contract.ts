/**
 * The response contract, checked on every answer the tests' HTTP client receives: the registry's
 * operation is found by method and path, then a 2xx JSON body must match `responses[status]`, a
 * stream's events the payloads its `stream.events` declares by name, and any error body
 * (status 400 or more, or a stream's `error` event) ErrorBody. So a schema that stops describing
 * what the server sends fails the test that saw it.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { newAjv } from '../../server/pipeline/validate.ts';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { ErrorBody } from '../../shared/schemas/common.ts';
import type { ReceivedEvent } from './sse.ts';

interface Route {
  id: string;
  op: Operation;
  method: string;
  pattern: RegExp;
}

/** Registry paths, at the bare root or under `/v1`; a path parameter is one segment. */
const routes: Route[] = Object.entries(operations as Record<string, Operation>).map(([id, op]) => ({
  id,
  op,
  method: op.method,
  pattern: new RegExp(`^(?:/v1|/dashboard)?${op.path.replaceAll('.', '\\.').replace(/\{\w+\}/g, '[^/]+')}/?$`),
}));

/** The operation a request reached, or undefined for routes outside the registry (`/openapi.json`…). */
export function operationOf(method: string, url: string): { id: string; op: Operation } | undefined {
  const path = url.split(/[?#]/)[0]!;
  return routes.find((route) => route.method === method.toUpperCase() && route.pattern.test(path));
}

const ajv = newAjv({ allErrors: true });
const compiled = new Map<TSchema, ValidateFunction>();

/** One compiled validator per schema, for the whole test file. */
function validatorOf(schema: TSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  return validate;
}

const MAX_LISTED = 5;

/** `/results/0/cnpj must match pattern …`, for the first few errors. */
function describe(errors: ErrorObject[]): string {
  const listed = errors.slice(0, MAX_LISTED).map((e) => {
    const extra = e.keyword === 'additionalProperties' ? ` '${String(e.params.additionalProperty)}'` : '';
    return `${e.instancePath || '(body)'} ${e.message ?? e.keyword}${extra}`;
  });
  return listed.join('; ') + (errors.length > MAX_LISTED ? `; and ${errors.length - MAX_LISTED} more` : '');
}

/** Throws, naming the operation and the failing paths, when `value` does not match `schema`. */
export function assertMatches(schema: TSchema, value: unknown, what: string): void {
  const validate = validatorOf(schema);
  if (!validate(value)) throw new Error(`Response contract: ${what} does not match its schema: ${describe(validate.errors ?? [])}`);
}

/** Checks one answer against the contract of the operation that gave it. */
export function checkResponse(method: string, url: string, status: number, body: unknown, events?: ReceivedEvent[]): void {
  const found = operationOf(method, url);
  const name = found ? `${found.id} (${method} ${url}) ${status}` : `${method} ${url} ${status}`;
  if (status >= 400) {
    // Every error is JSON `{error, message?}`, on registry routes and off them.
    assertMatches(ErrorBody, body, `the error body of ${name}`);
    return;
  }
  if (!found) return;
  const { op } = found;
  // A reconnection (Last-Event-ID) to a stream with nothing more to send: 204 ends it.
  if (op.stream && status === 204) return;
  if (op.stream && events) {
    checkEvents(op.stream, events, name);
    return;
  }
  // A file (an export) is checked by its test, against the rows it must hold.
  if (op.file) {
    if (typeof body !== 'string' && body !== undefined) throw new Error(`Response contract: ${name}: a file answered JSON`);
    return;
  }
  const schema = op.responses[status];
  if (!schema) throw new Error(`Response contract: ${name}: the registry declares no ${status} response (it has ${Object.keys(op.responses).join(', ')})`);
  assertMatches(schema, body, `the body of ${name}`);
}

/**
 * Each event by its name against the stream's declared payloads (`error` is ErrorBody), ending
 * with exactly one `done`, last; or, once streaming failed in the SSE writer, an `error` last.
 */
function checkEvents(stream: NonNullable<Operation['stream']>, events: ReceivedEvent[], name: string): void {
  const declared: Record<string, TSchema> = stream.events;
  for (const [i, { event, data }] of events.entries()) {
    const schema = declared[event] ?? (event === 'error' ? ErrorBody : undefined);
    if (!schema) throw new Error(`Response contract: ${name} sent an event \`${event}\`, which is not in its contract`);
    assertMatches(schema, data, `event ${i} (\`${event}\`) of ${name}`);
  }
  const dones = events.filter((e) => e.event === 'done');
  const last = events.at(-1);
  const endsWell = dones.length === 1 && last === dones[0];
  const endsInError = dones.length === 0 && last?.event === 'error';
  if (!endsWell && !endsInError) {
    throw new Error(`Response contract: ${name} must end with exactly one \`done\` (or \`error\`) event, last; it sent ${events.map((e) => e.event).join(', ') || 'nothing'}`);
  }
}
