/**
 * The shape of one registry entry. The registry is data only: no Node imports, so the add-on
 * can bundle it into Apps Script. Routing, validation, OpenAPI, MCP tools and the add-on's typed
 * client are all generated from these entries.
 */
import type { Static, TObject, TSchema } from '@sinclair/typebox';

export const SCOPES = [
  'catalog:read',
  'search:write',
  'enrich:write',
  'research:write',
  'outreach:read',
  'outreach:write',
  'credits:read',
] as const;
export type Scope = (typeof SCOPES)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How an operation is paid for. Costs are defaults; the server may override them by configuration.
 * - free: never charges.
 * - per_result: `cost` for each `unit` returned (rows, companies found, leads enriched).
 * - fixed: `cost` per successful call; `costWith` names a boolean input that switches to another price.
 * - provider_sum: the sum of the declared costs of the providers that returned data.
 */
export type CreditRule =
  | { rule: 'free' }
  | { rule: 'per_result'; unit: string; cost: number }
  | { rule: 'fixed'; cost: number; costWith?: { field: string; cost: number } }
  | { rule: 'provider_sum' };

/**
 * Credits for `units` of an operation's result: rows or leads for `per_result`, 1 (or 0) for a
 * `fixed` operation that succeeded (or served nothing billable), credits already summed for
 * `provider_sum`. The one place the registry's prices turn into a debit.
 */
export function priceOf(rule: CreditRule, units: number, input: unknown): number {
  switch (rule.rule) {
    case 'free':
      return 0;
    case 'per_result':
      return units * rule.cost;
    case 'provider_sum':
      return units;
    case 'fixed': {
      const withField = rule.costWith && (input as Record<string, unknown> | null)?.[rule.costWith.field] === true;
      return units * (withField ? rule.costWith!.cost : rule.cost);
    }
  }
}

/**
 * The events a stream sends, by name, each with its payload schema: one source for the handler's
 * types, the SSE writer, OpenAPI and the tests' contract. Every stream ends with one `done`.
 */
export interface StreamSchemas {
  events: { done: TSchema } & Record<string, TSchema>;
  /**
   * `responses[200]` is a JSON answer the handler gives instead of events when the client asks for
   * `Accept: application/json` (the agent's chat). Without it, `responses[200]` is the `page`
   * payload, so OpenAPI has a schema to name.
   */
  json?: boolean;
  /**
   * false: the handler works on whether or not its events are read (the agent's loop), so a client
   * that leaves stops it at once, where a stream pulled page by page (the searches) is paused for a
   * while in case its client reconnects with `Last-Event-ID`. Either way a reconnection never runs
   * it again.
   */
  pausable?: false;
}

export interface RequestSchemas {
  params?: TObject;
  query?: TObject;
  body?: TSchema;
}

export interface Operation {
  method: HttpMethod;
  /** OpenAPI-style path relative to /v1, e.g. `/api/prospecting/templates/{templateId}`. */
  path: string;
  summary: string;
  description?: string;
  /** OpenAPI tag, one per area. */
  tag: string;
  /**
   * Scope an API key or OAuth token must carry; null for operations open to everyone, or (with
   * `access: 'dashboard'`) to a dashboard session alone.
   */
  scope: Scope | null;
  /**
   * `dashboard`: only a signed-in dashboard session may call it (key management); an API key or
   * access token is refused with 403 `dashboard_only`. Such an operation is no tool, and not in
   * the public /v1 reference.
   */
  access?: 'dashboard';
  /**
   * The operation acts for other operations (jobs), so its `scope` is null and yet a credential is
   * required before anything is read. With `field`, the body field naming the operation: the caller
   * needs that operation's scope, and its plan when it requires one (checked by the pipeline).
   * Without, the handler checks the scope of the operation of the record it reads (`authorize`).
   */
  actsFor?: { field?: string };
  /** Whether the workspace needs an active plan (trial or active) to call it. */
  requiresPlan: boolean;
  credits: CreditRule;
  request: RequestSchemas;
  /** Success status → response body schema. A stream answers `text/event-stream`. */
  responses: Record<number, TSchema>;
  /** Error statuses the interface lists for this operation (the error body is always `{error, message?}`). */
  errors: number[];
  /** Answers server-sent events instead of JSON: the named events, then one `done`. */
  stream?: StreamSchemas;
  /**
   * Answers a file instead of JSON, as one of these media types (an export): its handler's value is
   * a `FileAnswer` (server/file-answer.ts). Such an operation is no tool.
   */
  file?: { mediaTypes: readonly string[] };
  /**
   * false: not an MCP tool, so not offered to the agent either (the agent's own operations: a
   * chat offered to itself would recurse).
   */
  tool?: false;
  /** Part of prospecta's extensions rather than the published interface. */
  extension?: boolean;
  /**
   * Whether it takes an `Idempotency-Key`, when `takesIdempotencyKey`'s rule (a POST that charges
   * or creates) does not say it right: the agent's chat charges through its tools; creating an API
   * key must not store the secret its answer holds.
   */
  idempotent?: boolean;
  /** A larger body than the DEFAULT_BODY_BYTES every other operation takes (a job's items). */
  maxBodyBytes?: number;
}

/** The body an operation takes unless its entry says more (`maxBodyBytes`). */
export const DEFAULT_BODY_BYTES = 1024 * 1024;

/**
 * The largest body an operation takes: its HTTP body, and its MCP tool call's whole message, so
 * a client meets one limit whichever way it calls.
 */
export const bodyLimitOf = (op: Operation): number => op.maxBodyBytes ?? DEFAULT_BODY_BYTES;

/** Whether an operation can charge: every credit rule but `free`. */
export function isPaid(op: Pick<Operation, 'credits'>): boolean {
  return op.credits.rule !== 'free';
}

/**
 * Whether a call may meet the plan gate, or be charged: an operation acting for another (a job)
 * takes that one's plan and price (the pipeline's rule), so it may meet both.
 */
export const mayNeedPlan = (op: Pick<Operation, 'requiresPlan' | 'actsFor'>): boolean => op.requiresPlan || Boolean(op.actsFor?.field);
export const mayCharge = (op: Pick<Operation, 'credits' | 'actsFor'>): boolean => isPaid(op) || Boolean(op.actsFor?.field);

/**
 * Whether an operation takes an `Idempotency-Key` (its first answer stored and replayed): a POST
 * that charges or creates (answers 201), unless its entry says otherwise. The one home of the rule,
 * read by the pipeline, OpenAPI, the registry's tests and the add-on's client.
 */
export function takesIdempotencyKey(op: Operation): boolean {
  return op.idempotent ?? (op.method === 'POST' && (isPaid(op) || 201 in op.responses));
}

/** Identity helper that keeps the literal types of an entry, so InputOf/OutputOf stay precise. */
export function defineOperations<const T extends Record<string, Operation>>(ops: T): T {
  return ops;
}

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;
type EmptyObject = Record<never, never>;

/** The single input object a handler receives: path params, query and body merged. */
export type InputOfOperation<O extends Operation> = StaticOr<O['request']['params'], EmptyObject> &
  StaticOr<O['request']['query'], EmptyObject> &
  StaticOr<O['request']['body'], EmptyObject>;

/** The body of the first success response. */
export type OutputOfOperation<O extends Operation> = {
  [S in keyof O['responses']]: O['responses'][S] extends TSchema ? Static<O['responses'][S]> : never;
}[keyof O['responses']];

/** The events a stream operation's handler yields, typed from its registry entry. */
export type StreamEventOfOperation<O extends Operation> = O extends { stream: { events: infer E extends Record<string, TSchema> } }
  ? { [K in keyof E & string]: { event: K; data: Static<E[K]> } }[keyof E & string]
  : never;
