/**
 * `POST /mcp` (and `/v1/mcp`): the MCP binding on the Koa app, serving both protocol revisions
 * from one endpoint on the official SDK (v2). It comes after identification and the rate limit,
 * like any request, so the same request id, access log and quota apply (and after the origin
 * check, `origin.ts`, which comes before them all). The credential is checked before the body is
 * read; then the body is read here (one JSON-RPC message: batches were dropped from MCP in
 * 2025-06-18; a tool call as large as its operation's HTTP body, anything else 1 MiB) and routed by revision:
 *
 * - 2026-07-28 (the protocol version and client identity in each request's `_meta`): the SDK's
 *   `createMcpHandler`, which checks the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers
 *   against the body (400 with -32020 on a mismatch), answers `server/discover`, refuses the
 *   methods the revision removed, and stamps `resultType`, `ttlMs` and `cacheScope`;
 * - 2025-era messages (an `initialize`, then each POST on its own): the SDK's stateless
 *   Streamable HTTP transport, answering JSON unless the call asked for progress.
 *
 * Either way a fresh SDK server from `server.ts` answers, and Koa writes its response.
 */
import type { createMcpHandler } from '@modelcontextprotocol/server';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { requireCredential } from '../auth/principal.ts';
import { ServiceError } from '../lib/errors.ts';
import { bodyLimitOf, DEFAULT_BODY_BYTES } from '../../shared/operations/types.ts';
import { fieldOf, mebibytes, readCapped, readJson, type ValueProblem } from '../http/body.ts';
import { errorHeaders, STATUS_OF } from '../http/error-status.ts';
import type { AppContext, Middleware } from '../http/state.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { tools } from '../tools/tools.ts';
import type { Sdk } from './sdk.ts';
import { createMcpServer, type McpContext } from './server.ts';

export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  pipeline: Pipeline;
  version: string;
  /** The protected-resource metadata of `/mcp` (RFC 9728), named in a 401's WWW-Authenticate. */
  resourceMetadata: string;
}

export function mcpRoute({ pipeline, version, resourceMetadata }: McpRouteOptions): Middleware {
  // The 2026-07-28 leg: one handler for the app, a fresh server per request from the context the
  // route left for that request (the SDK hands the factory the request it was given).
  const contexts = new WeakMap<Request, McpContext>();
  // The SDK is loaded by the first MCP request, not at start-up: its modules and schemas took a
  // quarter to half a second of every server's start, MCP clients or not.
  let loading: Promise<{ sdk: Sdk; modern: ReturnType<typeof createMcpHandler> }> | undefined;
  const load = async () => {
    const sdk = await import('@modelcontextprotocol/server');
    const modern = sdk.createMcpHandler(
      ({ requestInfo }) => {
        const context = requestInfo && contexts.get(requestInfo);
        if (!context) throw new Error('MCP: a request reached the server factory without its context');
        return createMcpServer(sdk, context);
      },
      { legacy: 'reject' },
    );
    return { sdk, modern };
  };

  // Mounted at MCP_PATH (and under /v1) only.
  return async (ctx) => {
    ctx.state.operation = 'mcp';
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      throw new ServiceError('method_not_allowed', `${MCP_PATH} is stateless: send every message as a POST.`);
    }
    const caller = { principal: ctx.state.principal, refused: ctx.state.authProblem };
    try {
      requireCredential(caller);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      return answer(ctx, STATUS_OF[err.code], { error: err.code, message: err.message }, errorHeaders(err, resourceMetadata));
    }

    const { sdk, modern } = await (loading ??= load());
    const message = await readMessage(ctx, sdk);
    if ('error' in message) return answer(ctx, message.status, { jsonrpc: '2.0', id: null, error: message.error });

    const context: McpContext = { pipeline, caller, log: ctx.state.log, trace: ctx.state.trace, version, modern: false, refusedArguments: message.refusedArguments };
    // The client's hang-up aborts the call in progress (the SDK reads the request's signal).
    const hangUp = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) hangUp.abort();
    });
    const request = new Request(new URL(ctx.originalUrl, 'http://mcp.invalid'), { method: 'POST', headers: headersOf(ctx), signal: hangUp.signal });
    let response: Response;
    if (await sdk.isLegacyRequest(request, message.body)) {
      response = await serveLegacy(sdk, request, message.body, context, hangUp.signal);
    } else {
      contexts.set(request, { ...context, modern: true });
      response = await modern.fetch(request, { parsedBody: message.body });
    }
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    const streamed = response.headers.get('content-type')?.startsWith('text/event-stream');
    ctx.body = !response.body ? null : streamed ? Readable.fromWeb(response.body as WebReadableStream) : Buffer.from(await response.arrayBuffer());
  };
}

/**
 * A 2025-era message on a fresh server and stateless transport (no session): one JSON answer
 * unless the call asked for progress, which needs an event stream to travel in.
 */
async function serveLegacy(sdk: Sdk, request: Request, body: unknown, context: McpContext, hangUp: AbortSignal): Promise<Response> {
  const server = createMcpServer(sdk, context);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
  // After a complete answer there is nothing to stop, and closing would only build a "connection
  // closed" error to drop; a client that leaves before it stops the call.
  hangUp.addEventListener('abort', () => {
    void transport.close();
    void server.close();
  }, { once: true });
  await server.connect(transport);
  return transport.handleRequest(request, { parsedBody: body });
}

function headersOf(ctx: AppContext): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

function wantsProgress(message: unknown): boolean {
  const params = (message as { params?: { _meta?: { progressToken?: unknown } } }).params;
  return params?._meta?.progressToken !== undefined;
}

function answer(ctx: AppContext, status: number, body: unknown, headers: Record<string, string> = {}): void {
  ctx.set(headers);
  ctx.status = status;
  ctx.body = body;
}

type Read = { body: unknown; refusedArguments?: string } | { status: number; error: { code: number; message: string } };

const rpcError = (status: number, code: number, message: string): Read => ({ status, error: { code, message } });

/**
 * The body as one JSON-RPC message, or the JSON-RPC error that says why it is not one: -32700
 * when it is not JSON at all, -32600 when it is JSON but not a JSON-RPC message (the SDK's
 * transport would call both a parse error). What no operation may receive inside a tool call's
 * `arguments` (a `__proto__` or repeated name, NUL, 1e309) is that tool's error, as any invalid
 * argument is: the arguments go no further, and the message names the field within them.
 */
async function readMessage(ctx: AppContext, { isJSONRPCRequest, isJSONRPCNotification, isJSONRPCResponse }: Sdk): Promise<Read> {
  if (!ctx.is('application/json')) return rpcError(415, -32000, 'Unsupported Media Type: send the message as application/json.');
  const encoding = ctx.get('Content-Encoding');
  if (encoding && encoding !== 'identity') return rpcError(415, -32000, `Unsupported Content-Encoding: ${encoding}.`);
  const tooLarge = (limit: number) => rpcError(413, -32000, `The message is larger than ${mebibytes(limit)}.`);
  if (Number(ctx.get('Content-Length')) > LARGEST_MESSAGE_BYTES) return tooLarge(LARGEST_MESSAGE_BYTES);
  let body: unknown;
  let problem: ValueProblem | null;
  let size: number;
  try {
    const bytes = await readCapped(ctx, LARGEST_MESSAGE_BYTES);
    size = bytes.length;
    ({ value: body, problem } = readJson(bytes));
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    if (err.code === 'payload_too_large') return tooLarge(LARGEST_MESSAGE_BYTES);
    return rpcError(400, -32700, `Parse error: ${err.message}`);
  }
  const inArguments = problem && isToolCall(body) && problem.path[0] === 'params' && problem.path[1] === 'arguments';
  if (problem && !inArguments) return rpcError(400, -32700, `Parse error: ${problem.message(fieldOf(problem.path) || 'the body')}`);
  const limit = messageLimitOf(body);
  if (size > limit) return tooLarge(limit);
  if (Array.isArray(body)) return rpcError(400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per POST.');
  if (typeof body !== 'object' || body === null) return rpcError(400, -32600, 'Invalid Request: the body must be one JSON-RPC message object.');
  if (!isJSONRPCRequest(body) && !isJSONRPCNotification(body) && !isJSONRPCResponse(body)) {
    return rpcError(400, -32600, `Invalid Request: not a JSON-RPC 2.0 message (${whatIsWrong(body as Record<string, unknown>)}).`);
  }
  if (!problem) return { body };
  // The problem lies inside a tool call's arguments: the call is answered, its arguments refused.
  if ('params' in body && typeof body.params === 'object' && body.params !== null && 'arguments' in body.params) body.params.arguments = {};
  return { body, refusedArguments: problem.message(fieldOf(problem.path.slice(2)) || 'arguments') };
}

function isToolCall(message: unknown): boolean {
  const { method, params } = message as { method?: unknown; params?: unknown };
  return method === 'tools/call' && typeof params === 'object' && params !== null && !Array.isArray(params);
}

/** The largest message: the largest tool call (a job's items), read before the message says what it is. */
const LARGEST_MESSAGE_BYTES = Math.max(DEFAULT_BODY_BYTES, ...[...tools.values()].map((tool) => bodyLimitOf(tool.operation)));

/** What a message may weigh: a tool call what its operation's HTTP body may (`bodyLimitOf`), anything else 1 MiB. */
function messageLimitOf(message: unknown): number {
  if (typeof message !== 'object' || message === null) return DEFAULT_BODY_BYTES;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } | null };
  const tool = method === 'tools/call' && typeof params?.name === 'string' ? tools.get(params.name) : undefined;
  return tool ? bodyLimitOf(tool.operation) : DEFAULT_BODY_BYTES;
}

function whatIsWrong(message: Record<string, unknown>): string {
  if (message.jsonrpc !== '2.0') return '`jsonrpc` must be "2.0"';
  if ('method' in message && typeof message.method !== 'string') return '`method` must be a string';
  if ('id' in message && typeof message.id !== 'string' && typeof message.id !== 'number') return '`id` must be a string or a number';
  if ('params' in message && (typeof message.params !== 'object' || message.params === null || Array.isArray(message.params))) return '`params` must be an object';
  if (!('method' in message) && !('result' in message) && !('error' in message)) return 'it has no `method`';
  return 'unknown or misplaced members';
}
