/**
 * One MCP server per POST, on the SDK's low-level `Server` (v2), serving either protocol
 * revision: `tools/list` shows the tools the caller's scopes allow, and `tools/call` runs the
 * tool's operation through the pipeline, exactly as HTTP does: the same validation, plan gate,
 * charges and ledger movement. A ServiceError becomes an `isError` result with the code HTTP
 * would answer and no `structuredContent` (clients validate any `structuredContent` against the
 * tool's output schema, errors included), so a model can read it and correct itself. On the
 * 2026-07-28 revision it also serves the tasks extension (tasks.ts): a job-starting tool answers a
 * task to a client that declares it.
 */
import type { CallToolResult, Server } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Caller } from '../invocation/caller.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { mergePages } from '../tools/merge-pages.ts';
import { tools, visibleTools } from '../tools/tools.ts';
import type { TraceContext } from '../lib/trace-context.ts';
import type { Sdk } from './sdk.ts';
import { createdTask, declaresTasks, registerTaskMethods, TASKS_EXTENSION } from './tasks.ts';

export const INSTRUCTIONS =
  'prospecta is B2B data and outreach: search people and companies (Brazil’s public company registry and data ' +
  'providers), look up to 500 Brazilian companies by CNPJ, enrich a person or company across providers, research ' +
  'a row on the web, write short AI column values, and prepare outreach campaigns whose messages a person reviews. ' +
  'Paid tools charge credits only for data found (get_credits shows the balance); each result says what it cost.';

/**
 * How long a 2026-07-28 client may keep a list: they change only with a new release. The tool
 * list depends on the credential's scopes, so only that client may keep it; the rest is the same
 * for everyone.
 */
const HOUR_MS = 3_600_000;
const CACHE_HINTS = {
  'tools/list': { ttlMs: HOUR_MS, cacheScope: 'private' },
  'server/discover': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'prompts/list': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'resources/list': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: HOUR_MS, cacheScope: 'public' },
} as const;

export interface McpContext {
  pipeline: Pipeline;
  caller: Caller;
  log: Logger;
  /** The POST's trace: tool calls continue it. */
  trace: TraceContext;
  version: string;
  /** The request is of the 2026-07-28 revision, where the tasks extension lives. */
  modern: boolean;
  /** Why the tool call's arguments were refused as the message was read (route.ts): the call answers that. */
  refusedArguments?: string;
}

/** What the server offers, by revision: its card (server-card.ts) says the same. */
const CAPABILITIES = { tools: {}, prompts: {}, resources: {} };
export const MODERN_CAPABILITIES = { ...CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } };

export function createMcpServer(sdk: Sdk, { pipeline, caller, log, trace, version, modern, refusedArguments }: McpContext): Server {
  const { Server, ProtocolError, ProtocolErrorCode, ResourceNotFoundError } = sdk;
  const server = new Server(
    { name: 'prospecta', version },
    // A copy each: the SDK keeps the object it is given, and may add to it.
    { capabilities: structuredClone(modern ? MODERN_CAPABILITIES : CAPABILITIES), instructions: INSTRUCTIONS, cacheHints: CACHE_HINTS },
  );
  if (modern) registerTaskMethods(sdk, server, { pipeline, caller, log, trace });

  // prospecta's surface is its tools. Its prompt and resource lists are empty rather than
  // missing, so a client that asks (and the revision's caching rules, which cover every list)
  // gets a list it may keep, and a name or URI it asks for is "not found" (-32602), not "no such
  // method".
  server.setRequestHandler('prompts/list', async () => ({ prompts: [] }));
  server.setRequestHandler('prompts/get', async (request) => {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Prompt not found: ${request.params.name}`);
  });
  server.setRequestHandler('resources/list', async () => ({ resources: [] }));
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', async (request) => {
    throw new ResourceNotFoundError(request.params.uri);
  });

  server.setRequestHandler('tools/list', async () => ({
    tools: visibleTools(caller, 'mcp').map((tool) => tool.definition),
  }));

  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    if (refusedArguments !== undefined) return failure(new ServiceError('invalid_request', refusedArguments));
    const meta = request.params._meta;
    try {
      const outcome = await pipeline.invoke(tool.operationId, caller, tool.split(request.params.arguments ?? {}), {
        log,
        signal: ctx.mcpReq.signal,
        ...idempotencyKeyOf(meta),
        trace,
        binding: 'mcp',
      });
      if (outcome.kind === 'value') {
        // A job, for a client that follows jobs as tasks.
        if (tool.task && modern && declaresTasks(ctx)) return await createdTask({ pipeline, caller, log, trace }, outcome.value, ctx.mcpReq.signal);
        return success(outcome.value);
      }
      const progressToken = meta?.progressToken;
      // One progress notification per page, when the client asked for them.
      const onPage = (pages: number, source: string, rows: number) =>
        progressToken === undefined
          ? Promise.resolve()
          : ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: pages, message: `${rows} from ${source}` } });
      return success(await mergePages(outcome.events, onPage));
    } catch (err) {
      if (err instanceof ServiceError) return failure(err);
      if (ctx.mcpReq.signal.aborted) throw err;
      log.error({ err, tool: tool.definition.name }, 'tool call failed');
      return failure(new ServiceError('internal_error', 'Something went wrong on our side.'));
    }
  });
  return server;
}

/**
 * `_meta.idempotencyKey` of a `tools/call`: what HTTP's `Idempotency-Key` header is, for the tools
 * whose operation takes one. Any other type is refused as such, before the pipeline runs, rather
 * than read as an empty key.
 */
export const IDEMPOTENCY_META = 'idempotencyKey';

function idempotencyKeyOf(meta: Record<string, unknown> | undefined): { idempotencyKey?: string } {
  const value = meta?.[IDEMPOTENCY_META];
  if (value === undefined) return {};
  if (typeof value !== 'string') {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
    const type = kind === 'null' ? kind : `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind}`;
    throw new ServiceError('invalid_request', `_meta.${IDEMPOTENCY_META} must be a string (a unique value per call, e.g. a UUID), not ${type}.`);
  }
  return { idempotencyKey: value };
}

function success(body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body as Record<string, unknown> };
}

function failure(err: ServiceError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: err.code, message: err.message }) }] };
}
