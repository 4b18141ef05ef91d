/**
 * One MCP server per POST (the stateless Streamable HTTP transport): `tools/list` shows the tools
 * the caller's scopes allow, and `tools/call` runs the tool's operation through the pipeline,
 * exactly as HTTP does: the same validation, plan gate, charges and ledger movement. A
 * ServiceError becomes an `isError` result with the code HTTP would answer, so a model can read
 * it and correct itself.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Logger } from 'pino';
import type { Caller } from '../auth/principal.ts';
import { ServiceError } from '../errors.ts';
import type { StreamEvent } from '../pipeline/outcome.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { tools, type Tool } from './tools.ts';
import type { TraceContext } from '../trace-context.ts';

const INSTRUCTIONS =
  'prospecta is B2B data and outreach: search people and companies (Brazil’s public company registry and data ' +
  'providers), look up to 500 Brazilian companies by CNPJ, enrich a person or company across providers, research ' +
  'a row on the web, write short AI column values, and prepare outreach campaigns whose messages a person reviews. ' +
  'Paid tools charge credits only for data found (get_credits shows the balance); each result says what it cost.';

/**
 * The SDK makes an Ajv instance per server unless given one; a server lives for one POST, and
 * compiling Ajv's keywords each time cost a fifth of a small call's CPU. It only checks
 * elicitation forms, which prospecta never sends, so one instance serves every server.
 */
const validator = new AjvJsonSchemaValidator();

export interface McpContext {
  pipeline: Pipeline;
  caller: Caller;
  log: Logger;
  /** The POST's trace: tool calls continue it. */
  trace: TraceContext;
  version: string;
}

/** The tools a caller may see: open ones, and those whose scope its credential holds. */
export function visibleTools(caller: Caller): Tool[] {
  const scopes = new Set(caller.principal?.scopes ?? []);
  return [...tools.values()].filter((tool) => tool.scope === null || scopes.has(tool.scope));
}

export function createMcpServer({ pipeline, caller, log, trace, version }: McpContext): Server {
  const server = new Server({ name: 'prospecta', version }, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: validator,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: visibleTools(caller).map((tool) => tool.definition),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    const progressToken = request.params._meta?.progressToken;
    try {
      const outcome = await pipeline.invoke(tool.operationId, caller, tool.split(request.params.arguments ?? {}), {
        log,
        signal: extra.signal,
        ...idempotencyKeyOf(request.params._meta),
        trace,
        binding: 'mcp',
      });
      if (outcome.kind === 'value') return success(outcome.value);
      // One progress notification per page, when the client asked for them.
      const onPage = (pages: number, source: string, rows: number) =>
        progressToken === undefined
          ? Promise.resolve()
          : extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: pages, message: `${rows} from ${source}` },
            });
      return success(await mergePages(outcome.events, onPage));
    } catch (err) {
      if (err instanceof ServiceError) return failure(err);
      if (extra.signal.aborted) throw err;
      log.error({ err, tool: tool.definition.name }, 'tool call failed');
      return failure(new ServiceError('internal_error', 'Something went wrong on our side.'));
    }
  });
  return server;
}

/**
 * `_meta.idempotencyKey` of a `tools/call`: what HTTP's `Idempotency-Key` header is, for the tools
 * whose operation takes one. Not a string → the pipeline's 400 for a malformed key.
 */
export const IDEMPOTENCY_META = 'idempotencyKey';

function idempotencyKeyOf(meta: Record<string, unknown> | undefined): { idempotencyKey?: string } {
  const value = meta?.[IDEMPOTENCY_META];
  if (value === undefined) return {};
  return { idempotencyKey: typeof value === 'string' ? value : '' };
}

/** A stream's pages gathered into one result: every row, then what `done` says. */
export async function mergePages(
  events: AsyncIterable<StreamEvent>,
  onPage: (pages: number, source: string, rows: number) => Promise<void>,
): Promise<Record<string, unknown>> {
  const results: unknown[] = [];
  let pages = 0;
  let done: Record<string, unknown> = {};
  for await (const { event, data } of events) {
    const payload = data as { source?: string; results?: unknown[] };
    if (event === 'page') {
      results.push(...(payload.results ?? []));
      await onPage(++pages, payload.source ?? '', payload.results?.length ?? 0);
    } else if (event === 'done') {
      done = data as Record<string, unknown>;
    }
  }
  return { results, ...done };
}

function success(body: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body as Record<string, unknown> };
}

function failure(err: ServiceError): CallToolResult {
  const body = { error: err.code, message: err.message };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}
