/**
 * `POST /mcp` (and `/v1/mcp`): the MCP binding on the Koa app. It comes after identification and
 * the rate limit, like any request, so the same request id, access log and quota apply. The
 * credential is checked before the body is read; then the JSON-RPC body is read here (1 MiB, one
 * message: batches were dropped from MCP in 2025-06-18) and handed to a fresh server and
 * stateless transport (the SDK's web-standard one), whose answer Koa writes.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { requireCredential } from '../auth/principal.ts';
import { ServiceError } from '../errors.ts';
import { MAX_BODY_BYTES, parseJsonBody, readCapped } from '../http/body.ts';
import { errorHeaders, STATUS_OF } from '../http/error-status.ts';
import type { AppContext, Middleware } from '../http/state.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { createMcpServer } from './server.ts';

export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  pipeline: Pipeline;
  version: string;
  /** The protected-resource metadata of `/mcp` (RFC 9728), named in a 401's WWW-Authenticate. */
  resourceMetadata: string;
}

export function mcpRoute({ pipeline, version, resourceMetadata }: McpRouteOptions): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== MCP_PATH) return next();
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

    const message = await readMessage(ctx);
    if ('error' in message) return answer(ctx, message.status, { jsonrpc: '2.0', id: null, error: message.error });

    const server = createMcpServer({ pipeline, caller, log: ctx.state.log, trace: ctx.state.trace, version });
    // One JSON answer unless the client asked for progress, which needs an event stream to travel in.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(message.body) });
    // A client that leaves before its answer aborts the call in progress; after a complete answer
    // there is nothing to stop, and closing would only build a "connection closed" error to drop.
    ctx.res.once('close', () => {
      if (ctx.res.writableFinished) return;
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The web-standard transport, given the body already read, needs only the method and headers;
    // its answer is written by Koa like any other, so headers, status and the access log agree.
    const response = await transport.handleRequest(new Request(new URL(ctx.originalUrl, 'http://mcp.invalid'), { method: 'POST', headers: headersOf(ctx) }), {
      parsedBody: message.body,
    });
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    const streamed = response.headers.get('content-type')?.startsWith('text/event-stream');
    ctx.body = !response.body ? null : streamed ? Readable.fromWeb(response.body as WebReadableStream) : Buffer.from(await response.arrayBuffer());
  };
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

type Read = { body: unknown } | { status: number; error: { code: number; message: string } };

const rpcError = (status: number, code: number, message: string): Read => ({ status, error: { code, message } });

/** The body as one JSON-RPC message, or the JSON-RPC error that says why it is not one. */
async function readMessage(ctx: AppContext): Promise<Read> {
  if (!ctx.is('application/json')) return rpcError(415, -32000, 'Unsupported Media Type: send the message as application/json.');
  const encoding = ctx.get('Content-Encoding');
  if (encoding && encoding !== 'identity') return rpcError(415, -32000, `Unsupported Content-Encoding: ${encoding}.`);
  if (Number(ctx.get('Content-Length')) > MAX_BODY_BYTES) return rpcError(413, -32000, 'The message is larger than 1 MiB.');
  let body: unknown;
  try {
    body = parseJsonBody(await readCapped(ctx));
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    if (err.code === 'payload_too_large') return rpcError(413, -32000, 'The message is larger than 1 MiB.');
    return rpcError(400, -32700, `Parse error: ${err.message}`);
  }
  if (Array.isArray(body)) return rpcError(400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per POST.');
  if (typeof body !== 'object' || body === null) return rpcError(400, -32600, 'Invalid Request: the body must be one JSON-RPC message object.');
  return { body };
}

