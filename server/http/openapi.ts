/**
 * The OpenAPI 3.1 document, generated from the operation registry at start-up: the same schemas
 * that validate requests and that the tests hold every answer to describe them here, so the
 * document cannot drift from the server.
 */
import { INTERFACE_VERSION } from '../lib/version.ts';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { SESSION_COOKIE } from '../dashboard/session-cookie.ts';
import { ErrorBody } from '../../shared/schemas/common.ts';
import { errorResponses } from './openapi-errors.ts';
import { nulFreeInput } from './openapi-input.ts';
import { retryParameters, retryStatuses } from './openapi-retries.ts';

/** What OpenAPI allows as the key of a component. */
const COMPONENT_NAME = /^[a-zA-Z0-9._-]+$/;

/**
 * The document's schemas. A schema with a `title` is a named record (shared/schemas/common.ts): it
 * is written once under `components.schemas` and referred to wherever it appears, so a client
 * generator sees one `Company` rather than a copy per operation.
 */
class Components {
  readonly schemas: Record<string, unknown> = {};
  private readonly written = new Map<string, string>();

  /** JSON Schema for the document: TypeBox's symbol keys and `$id`s dropped, named records referred to. */
  schema(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((item) => this.schema(item));
    if (typeof node !== 'object' || node === null) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      // Property maps hold schemas under their names, `properties.title` included.
      if (key !== '$id') out[key] = key === 'properties' || key === 'patternProperties' ? this.map(value) : this.schema(value);
    }
    const title = out.title;
    return typeof title === 'string' ? this.named(title, out) : out;
  }

  /** Like `schema`, but the node itself is written in place (its named parts are still referred to). */
  inline(node: object): unknown {
    const { title: _title, ...rest } = node as Record<string, unknown>;
    return this.schema(rest);
  }

  private map(properties: unknown): unknown {
    if (typeof properties !== 'object' || properties === null) return properties;
    return Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, this.schema(schema)]));
  }

  private named(title: string, schema: Record<string, unknown>): unknown {
    if (!COMPONENT_NAME.test(title)) throw new Error(`OpenAPI: ${title} cannot name a component`);
    const json = JSON.stringify(schema);
    const earlier = this.written.get(title);
    if (earlier !== undefined && earlier !== json) throw new Error(`OpenAPI: two different schemas are named ${title}`);
    this.written.set(title, json);
    this.schemas[title] = schema;
    return { $ref: `#/components/schemas/${title}` };
  }
}

function parameters(op: Operation, components: Components) {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', op.request.params],
    ['query', op.request.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set<string>((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: components.schema(prop) });
    }
  }
  out.push(...retryParameters(op));
  out.push({
    name: 'Service-Version',
    in: 'header',
    required: false,
    schema: { type: 'string', enum: ['1'], default: '1' },
  });
  return out;
}

const RATE_HEADERS = {
  'RateLimit-Policy': { schema: { type: 'string' }, description: 'Quota policy, e.g. `"standard";q=600;w=60`.' },
  RateLimit: { schema: { type: 'string' }, description: 'Remaining quota, e.g. `"standard";r=599;t=42`.' },
  'Service-Version': { schema: { type: 'string' } },
};

/**
 * A stream's events as the `text/event-stream` schema of OpenAPI 3.1 reads (each event an object
 * of the SSE fields, as OpenAPI 3.2's `itemSchema` has it): one branch per event name, its `data`
 * JSON (`contentMediaType`) of the payload's schema (`contentSchema`).
 */
function eventSchema(events: Record<string, object>, components: Components): unknown {
  // A stream that fails once it has begun (its balance spent, say) ends with an `error` event (sse.ts).
  return {
    oneOf: Object.entries({ ...events, error: ErrorBody }).map(([name, payload]) => ({
      type: 'object',
      required: ['event', 'data'],
      properties: {
        event: { const: name },
        data: { type: 'string', contentMediaType: 'application/json', contentSchema: components.schema(payload) },
        id: { type: 'string', description: '`<streamId>:<seq>`, to resume after with `Last-Event-ID`.' },
        retry: { type: 'integer' },
      },
    })),
  };
}

function responses(op: Operation, components: Components) {
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(op.responses)) {
    const events = op.stream && { 'text/event-stream': { schema: eventSchema(op.stream.events, components) } };
    const names = op.stream ? Object.keys(op.stream.events).map((name) => `\`${name}\``).join(', ') : '';
    out[status] = {
      description: !op.stream
        ? 'Success.'
        : op.stream.json
          ? `Server-sent events (${names}; one \`done\` last), or with \`Accept: application/json\` one JSON answer.`
          : `Server-sent events (${names}; one \`done\` last).`,
      headers: RATE_HEADERS,
      content: op.file
        ? Object.fromEntries(op.file.mediaTypes.map((type) => [type, { schema: { type: 'string', description: schema.description } }]))
        : !events
        ? { 'application/json': { schema: components.schema(schema) } }
        : op.stream?.json
          ? { ...events, 'application/json': { schema: components.schema(schema) } }
          : events,
    };
  }
  for (const { status, description } of errorResponses(op)) {
    out[status] = {
      description,
      headers: status === 429 ? { ...RATE_HEADERS, 'Retry-After': { schema: { type: 'integer' } } } : RATE_HEADERS,
      content: { 'application/json': { schema: components.schema(ErrorBody) } },
    };
  }
  for (const { status, description, empty } of retryStatuses(op)) {
    out[status] = empty
      ? { description, headers: { ...RATE_HEADERS, 'Stream-Status': { schema: { type: 'string', enum: ['finished', 'stopped', 'unknown'] } } } }
      : { description, headers: RATE_HEADERS, content: { 'application/json': { schema: components.schema(ErrorBody) } } };
  }
  return out;
}

/** Whether an omitted body is a valid one: the pipeline reads a missing body as `{}`. */
function bodyRequired(body: object): boolean {
  const { required, type, anyOf } = body as { required?: unknown[]; type?: unknown; anyOf?: unknown[] };
  // An `anyOf` of required properties (a new campaign: `templateId`, or `name` and `offering`) refuses `{}` too.
  return type !== 'object' || (Array.isArray(required) && required.length > 0) || Array.isArray(anyOf);
}

/** `publicUrl`: PUBLIC_URL, so that `servers` are absolute, as generated clients need them. */
export function buildOpenApi(version: string, publicUrl: string) {
  const components = new Components();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, op] of Object.entries(operations) as Array<[string, Operation]>) {
    const dashboardOnly = op.access === 'dashboard';
    const security = dashboardOnly ? [{ dashboardSession: [] }] : op.scope || op.actsFor ? [{ bearerAuth: [] }] : [];
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      // Key management answers at /dashboard/api/… to a signed-in session, never at /v1.
      ...(dashboardOnly ? { servers: [{ url: `${publicUrl}/dashboard`, description: 'The dashboard, signed in' }] } : {}),
      operationId: id,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      security,
      parameters: parameters(op, components),
      ...(op.request.body
        ? {
            requestBody: {
              required: bodyRequired(op.request.body),
              content: { 'application/json': { schema: components.schema(nulFreeInput(op.request.body)) } },
            },
          }
        : {}),
      responses: responses(op, components),
      // An operation acting for another takes that one's scope.
      'x-scope': op.actsFor ? 'of the operation it acts for' : op.scope,
      'x-credits': op.credits,
      'x-requires-plan': op.requiresPlan,
      ...(op.extension ? { 'x-extension': true } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'prospecta',
      version: INTERFACE_VERSION,
      description:
        'B2B people and company search, CNPJ lookup, cascade enrichment, AI columns and outreach reviewed before sending.',
      'x-server-version': version,
      license: { name: 'Proprietary', identifier: 'LicenseRef-prospecta' },
    },
    servers: [
      { url: `${publicUrl}/v1`, description: 'Version 1 (preferred)' },
      { url: publicUrl, description: 'The same operations at the bare root' },
    ],
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A workspace API key `service_live_…`, or an OAuth access token (JWT) of the issuer the server trusts; its protected-resource metadata is at /.well-known/oauth-protected-resource.',
        },
        dashboardSession: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: 'The session cookie of a signed-in dashboard (/dashboard/login); state changes must come from the dashboard itself (same Origin).',
        },
      },
    },
  };
}
