/**
 * A handler never sees Koa: it gets validated input and this context, and returns the response
 * body, or, for a stream operation, an async iterable of server-sent events. HTTP (and later MCP
 * and the agent) are thin bindings over the same handlers, so each rule is written once.
 */
import type { Logger } from 'pino';
import type { InputOf, OperationId, OutputOf, StreamEventOf } from '../../shared/operations/index.ts';
import type { Scope } from '../../shared/operations/types.ts';
import type { Services } from '../services.ts';

export interface Principal {
  kind: 'api_key';
  /** Stable id of the credential, used for rate limiting and logs. */
  credentialId: string;
  workspaceId: string;
  scopes: Scope[];
}

export interface HandlerContext {
  operationId: OperationId;
  /** The caller's workspace; throws 401 on an unauthenticated operation. */
  readonly workspaceId: string;
  principal: Principal | null;
  services: Services;
  log: Logger;
  /** Aborted when the client goes away; pass it to outgoing calls. */
  signal: AbortSignal;
  /**
   * Charges the workspace for data actually returned, priced by the operation's credit rule in
   * the registry (`priceOf`): `units` are the rows or leads returned, 1 for a fixed-price success
   * (0 when nothing billable was served), or the providers' summed credits. Call it once the
   * result is known and before returning it: it throws 402 `insufficient_credits` and changes
   * nothing when the balance does not cover it. Resolves with the credits charged.
   */
  charge(units: number, detail: string): Promise<number>;
  /** What `units` would cost under the operation's credit rule, for budgeting before any charge. */
  price(units: number): number;
}

/** A server-sent event as the HTTP binding writes it. */
export interface StreamEvent {
  event: string;
  data: unknown;
}

/** A stream operation's handler yields the `page` and `done` events its registry entry declares. */
export type Handler<Id extends OperationId> = (
  input: InputOf<Id>,
  ctx: HandlerContext,
) => Promise<OutputOf<Id>> | AsyncIterable<StreamEventOf<Id>>;

export type Handlers = { [Id in OperationId]: Handler<Id> };
