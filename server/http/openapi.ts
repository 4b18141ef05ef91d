/**
 * The OpenAPI 3.1 document, generated from the operation registry at start-up: the same schemas
 * that validate requests describe them here, so the document cannot drift from the server.
 */
import type { TSchema } from '@sinclair/typebox';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { ErrorBody } from '../../shared/schemas/common.ts';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameters; `message` names the field.',
  401: 'API key missing, invalid or revoked.',
  402: 'Insufficient credits, or no active plan.',
  403: 'The credential lacks the scope of this operation.',
  413: 'The body is larger than 1 MiB.',
  415: 'The body is not application/json.',
  404: 'Resource not found.',
  409: 'Conflict with the current state.',
  429: 'Rate limit exceeded; see `Retry-After`.',
  500: 'Internal error.',
  501: 'Not implemented yet.',
  503: 'A dependency (AI model or data provider) is unavailable.',
};

/** JSON Schema without TypeBox's symbol keys and with `$id`s removed (OpenAPI uses components). */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === '$id' ? undefined : value));
}

function parameters(op: Operation) {
  const out: unknown[] = [];
  for (const [where, schema] of [
    ['path', op.request.params],
    ['query', op.request.query],
  ] as const) {
    if (!schema) continue;
    const required = new Set<string>((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(schema.properties)) {
      out.push({ name, in: where, required: where === 'path' || required.has(name), schema: plain(prop) });
    }
  }
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

function responses(op: Operation) {
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(op.responses)) {
    out[status] = {
      description: op.stream ? 'Server-sent events: `page` events, then one `done`.' : 'Success.',
      headers: RATE_HEADERS,
      content: op.stream
        ? { 'text/event-stream': { schema: { type: 'string' }, 'x-event-schema': plain(schema) } }
        : { 'application/json': { schema: plain(schema) } },
    };
  }
  // The interface lists per-operation statuses; these apply to every operation of a kind.
  const hasInput = Boolean(op.request.params || op.request.query || op.request.body);
  const errors = new Set([
    ...op.errors,
    ...(hasInput ? [400] : []),
    ...(op.scope ? [401, 403] : []),
    ...(op.requiresPlan ? [402] : []),
    ...(op.request.body ? [413, 415] : []),
    429,
  ]);
  for (const status of [...errors].sort((a, b) => a - b)) {
    out[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? 'Error.',
      headers: status === 429 ? { ...RATE_HEADERS, 'Retry-After': { schema: { type: 'integer' } } } : RATE_HEADERS,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return out;
}

export function buildOpenApi(version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [id, op] of Object.entries(operations) as Array<[string, Operation]>) {
    const security = op.scope ? [{ bearerAuth: [] }] : [];
    (paths[op.path] ??= {})[op.method.toLowerCase()] = {
      operationId: id,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      security,
      parameters: parameters(op),
      ...(op.request.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(op.request.body) } } } }
        : {}),
      responses: responses(op),
      'x-scope': op.scope,
      'x-credits': op.credits,
      'x-requires-plan': op.requiresPlan,
      ...(op.extension ? { 'x-extension': true } : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'prospecta',
      version: '1.0.0',
      description:
        'B2B people and company search, CNPJ lookup, cascade enrichment, AI columns and outreach reviewed before sending.',
      'x-server-version': version,
    },
    servers: [{ url: '/v1' }, { url: '/' }],
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Workspace API key `service_live_…`.' },
      },
    },
  };
}
