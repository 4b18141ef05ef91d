/**
 * The operation registry as tools, generated once and shared by every binding that offers tools
 * to a model (MCP's `tools/list`, the built-in agent): one tool per operation, named by its id in
 * snake_case, taking one object that merges the operation's path, query and body fields, and
 * answering its success body. An entry marked `tool: false` (the agent's own operations) is no
 * tool; neither is a dashboard-only one.
 *
 * A tool list is read by a model, in its context, on every conversation: the output schemas are
 * compact (`compact-schema.ts`), the descriptions say what the tool does, costs and needs
 * (`description.ts`), and nothing speaks of HTTP.
 */
import type { TSchema } from '@sinclair/typebox';
import { operations, type OperationId } from '../../shared/operations/index.ts';
import type { Operation, Scope } from '../../shared/operations/types.ts';
import { mayCall } from '../auth/principal.ts';
import type { Caller } from '../invocation/caller.ts';
import { invalidRequest } from '../lib/errors.ts';
import type { Binding } from '../lib/metrics.ts';
import type { RawInput } from '../invocation/outcome.ts';
import { compactInputSchema, compactOutputSchema } from './compact-schema.ts';
import { toolDescription } from './description.ts';

type JsonSchema = Record<string, unknown>;

export interface ToolAnnotations {
  title: string;
  /** Absent means false, as MCP defines it. */
  readOnlyHint?: true;
  /** Only on a tool that is not read-only, where MCP's default (true) would otherwise apply. */
  destructiveHint?: boolean;
  /** Absent means false, as MCP defines it. */
  idempotentHint?: true;
  openWorldHint: boolean;
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
}

export interface Tool {
  operationId: OperationId;
  operation: Operation;
  /** The scope a credential must hold to see and call it; null for open operations. */
  scope: Scope | null;
  definition: ToolDefinition;
  /** The tool's one argument object, split back into the operation's request parts. */
  split(args: Record<string, unknown>): RawInput;
  /** It starts a job, which a client of MCP's tasks extension follows as a task (`TASK_OPERATIONS`). */
  task: boolean;
}

/**
 * The operations that answer `{jobId}` of a job they start: an MCP client that declares the tasks
 * extension gets that job as a task to follow (mcp/tasks.ts), where others get the answer itself.
 * Adding an operation here is all it takes.
 */
const TASK_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>(['startJob', 'exportCompanies']);

const PARTS = ['params', 'query', 'body'] as const;

/** `lookupCnpjBatch` → `lookup_cnpj_batch`. */
export const toolName = (operationId: string) => operationId.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A TypeBox schema as plain JSON Schema (its symbols dropped). */
const plain = (schema: TSchema): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

function objectParts(op: Operation): Array<{ part: (typeof PARTS)[number]; schema: JsonSchema }> {
  return PARTS.flatMap((part) => {
    const schema = op.request[part];
    return schema ? [{ part, schema: plain(schema) }] : [];
  });
}

/**
 * One object schema over every request part. A field name used by two parts would make the
 * split ambiguous, so it is refused when the tools are built, not guessed at. The input keeps its
 * descriptions and limits: they are how a model fills the arguments in right the first time.
 */
function mergedInput(id: string, op: Operation): ToolDefinition['inputSchema'] {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const extra: JsonSchema = {};
  let additionalProperties: unknown = false;
  for (const { part, schema } of objectParts(op)) {
    if (schema.type !== 'object') throw new Error(`tools: ${id}.request.${part} is not an object schema`);
    for (const [name, property] of Object.entries((schema.properties ?? {}) as Record<string, unknown>)) {
      if (name in properties) throw new Error(`tools: ${id} has a field ${name} in two request parts`);
      properties[name] = property;
    }
    required.push(...((schema.required ?? []) as string[]));
    // The body's own constraints over its fields (enrich's "at least one identifier") still hold.
    for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) if (schema[keyword]) extra[keyword] = schema[keyword];
    // A body open to fields of its own (the AI column's row) stays open in the tool.
    if (part === 'body' && schema.additionalProperties !== undefined) additionalProperties = schema.additionalProperties;
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties, ...extra };
}

/** What the tool answers: the success body, or for a stream every page merged with its `done`. */
function output(id: string, op: Operation): ToolDefinition['outputSchema'] {
  if (op.stream) {
    const { page: pageSchema, done: doneSchema } = op.stream.events;
    if (!pageSchema) throw new Error(`tools: ${id} is a stream without \`page\` events, which a tool cannot merge`);
    const page = plain(pageSchema);
    const done = plain(doneSchema);
    const pageProperties = page.properties as Record<string, unknown>;
    return {
      type: 'object',
      properties: { results: pageProperties.results, ...(done.properties as Record<string, unknown>) },
      required: ['results', ...((done.required ?? []) as string[])],
    };
  }
  const success = op.responses[Number(Object.keys(op.responses)[0])];
  const schema = success && plain(success);
  if (!schema || schema.type !== 'object') throw new Error(`tools: ${id}'s success response is not an object schema`);
  return schema as ToolDefinition['outputSchema'];
}

/** Scopes whose operations reach data providers, the web or the model. */
const OPEN_WORLD: ReadonlySet<Scope> = new Set(['search:write', 'enrich:write', 'research:write']);
/**
 * Scopes whose POSTs create, change or delete no record of the workspace (spending credits does
 * not count): searches, lookups, enrichment, research and the AI column only read, so a client
 * need not ask for approval before each. A POST answering 201 or 202 creates something whatever
 * its scope (a job, say), and is no read.
 */
const READ_ONLY: ReadonlySet<Scope> = new Set(['catalog:read', 'search:write', 'enrich:write', 'research:write', 'outreach:read', 'credits:read']);

export function annotationsOf(op: Operation): ToolAnnotations {
  const readOnly = op.method === 'GET' || (op.method === 'POST' && op.scope !== null && READ_ONLY.has(op.scope) && !(201 in op.responses) && !(202 in op.responses));
  // MCP's defaults are left unsaid (every byte of the list is paid in every client's context):
  // readOnlyHint and idempotentHint default to false; destructiveHint means nothing on a read-only
  // tool and defaults to true elsewhere, so it is said there; openWorldHint defaults to true, so always said.
  return {
    title: op.summary,
    ...(readOnly ? { readOnlyHint: true } : { destructiveHint: op.method === 'DELETE' }),
    ...(op.method === 'GET' || op.method === 'PUT' || op.method === 'DELETE' ? { idempotentHint: true } : {}),
    openWorldHint: op.scope !== null && OPEN_WORLD.has(op.scope),
  };
}

function definition(id: OperationId, op: Operation): ToolDefinition {
  return {
    name: toolName(id),
    description: toolDescription(op),
    inputSchema: compactInputSchema(mergedInput(id, op)) as ToolDefinition['inputSchema'],
    outputSchema: compactOutputSchema(output(id, op)) as ToolDefinition['outputSchema'],
    annotations: annotationsOf(op),
  };
}

function splitter(op: Operation): Tool['split'] {
  const owners = new Map<string, (typeof PARTS)[number]>();
  for (const { part, schema } of objectParts(op)) {
    for (const name of Object.keys((schema.properties ?? {}) as object)) owners.set(name, part);
  }
  // A field no part declares goes where the validator will name it as unknown.
  const fallback = (['body', 'query', 'params'] as const).find((part) => op.request[part]);
  return (args) => {
    const raw: Record<(typeof PARTS)[number], Record<string, unknown>> = { params: {}, query: {}, body: {} };
    for (const [name, value] of Object.entries(args)) {
      const part = owners.get(name) ?? fallback;
      if (!part) throw invalidRequest(`unknown property ${name}`);
      raw[part][name] = value;
    }
    return raw;
  };
}

function buildTools(): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  const described = new Set<string>();
  for (const id of Object.keys(operations) as OperationId[]) {
    const operation: Operation = operations[id];
    if (operation.tool === false || operation.access === 'dashboard') continue;
    const tool: Tool = { operationId: id, operation, scope: operation.scope, definition: definition(id, operation), split: splitter(operation), task: TASK_OPERATIONS.has(id) };
    for (const earlier of tools.values()) if (earlier.scope === tool.scope) referToShared(tool.definition, earlier.definition);
    describeOnce(tool.definition, operation.scope, described);
    tools.set(tool.definition.name, tool);
  }
  return tools;
}

/** A set of fields this large, the same in an earlier tool, is referred to rather than listed again. */
const SHARED_FIELDS = 8;

/**
 * The company search's filters are taken by its stream, the export, the changes feed and the
 * watches (at the top level or as one `filters` object): listed in full once, in the first tool
 * of the scope, and elsewhere by a sentence naming it (a client pays for every byte of the list on
 * every conversation: 48 KB at most). The later tool's input stays open to them; the pipeline
 * validates them as the operation declares, whatever the tool list says.
 */
function referToShared(definition: ToolDefinition, earlier: ToolDefinition): void {
  type Schema = { type?: unknown; properties?: Record<string, unknown>; required?: string[]; additionalProperties?: unknown; description?: string };
  const theirs = earlier.inputSchema.properties as Record<string, unknown>;
  const same = (name: string, schema: unknown) => name in theirs && JSON.stringify(withoutWords(schema)) === JSON.stringify(withoutWords(theirs[name]));
  const refer = (schema: Schema, where: string): boolean => {
    const shared = Object.keys(schema.properties ?? {}).filter((name) => same(name, schema.properties![name]));
    if (shared.length < SHARED_FIELDS) return false;
    for (const name of shared) delete schema.properties![name];
    if (schema.required) schema.required = schema.required.filter((name) => !shared.includes(name));
    schema.additionalProperties = true;
    definition.description += ` ${where} every field of ${earlier.name}.`;
    return true;
  };
  if (refer(definition.inputSchema as Schema, 'Also takes')) return;
  for (const [name, property] of Object.entries(definition.inputSchema.properties as Record<string, Schema>)) {
    if (property.type === 'object' && property.properties && refer(property, `\`${name}\` takes`)) return;
  }
}

/** A field's schema without its description, to compare two tools' fields. */
function withoutWords(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutWords);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'description').map(([key, value]) => [key, withoutWords(value)]));
}

/**
 * A field is described once in the list: the search, its stream and the export share their
 * filters, and a client pays for every byte of the list on every conversation (48 KB at most).
 * A later tool of the same scope (so visible whenever the first is) keeps the field and its type,
 * not the words already said beside the same name; also within an object argument (a watch's
 * `filters` are the search's).
 */
function describeOnce(definition: ToolDefinition, scope: Operation['scope'], described: Set<string>): void {
  type Property = { description?: string; type?: unknown; properties?: Record<string, Property> };
  const walk = (properties: Record<string, Property>) => {
    for (const [name, property] of Object.entries(properties)) {
      if (property.type === 'object' && property.properties) walk(property.properties);
      if (property.description === undefined) continue;
      const key = JSON.stringify([scope, name, property.description]);
      if (described.has(key)) delete property.description;
      else described.add(key);
    }
  };
  walk((definition.inputSchema as { properties?: Record<string, Property> }).properties ?? {});
}

/** Every tool by name, built once from the registry, in the registry's order. */
export const tools: ReadonlyMap<string, Tool> = buildTools();

/** The tools a caller may see and call through `binding` (`mayCall`, the one rule). */
export function visibleTools(caller: Caller, binding: Binding): Tool[] {
  return [...tools.values()].filter((tool) => mayCall(caller, tool.operation, binding));
}
