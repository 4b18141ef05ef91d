/**
 * The response contract itself: the checker the test client runs on every answer fails on a body
 * that lies, and every operation's success schema is a full one (test/helpers/contract.ts).
 */
import { describe, expect, it } from 'vitest';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';
import { checkResponse, operationOf } from '../helpers/contract.ts';

const registry: Record<string, Operation> = operations;

const credits = {
  balance: 500,
  consumed: 0,
  plan: { name: 'trial', expiresAt: '2026-12-01T00:00:00.000Z' },
  movements: [
    {
      movementId: '6f1c1c8e-5b7a-4c1e-9d3a-2f4b5c6d7e8f',
      at: '2026-11-24T00:00:00.000Z',
      amount: 500,
      balanceAfter: 500,
      operation: 'trial_grant',
      detail: 'Free trial credits',
    },
  ],
};

describe('the response checker', () => {
  it('finds the operation by method and path, with or without /v1, with path parameters and a query', () => {
    expect(operationOf('GET', '/v1/api/credits')?.id).toBe('getCredits');
    expect(operationOf('GET', '/api/credits')?.id).toBe('getCredits');
    expect(operationOf('patch', '/v1/api/prospecting/templates/0b6f7f1e-1d1c-4c57-a7b6-2a0c3d4e5f60')?.id).toBe('updateTemplate');
    expect(operationOf('PATCH', '/v1/api/prospecting/campaigns/x/cadence')?.id).toBe('updateCadence');
    expect(operationOf('GET', '/v1/api/prospecting/prospects?status=replied')?.id).toBe('listProspects');
    expect(operationOf('GET', '/openapi.json')).toBeUndefined();
    expect(operationOf('DELETE', '/v1/api/credits')).toBeUndefined();
  });

  it('accepts a body that matches its schema', () => {
    expect(() => checkResponse('GET', '/v1/api/credits', 200, credits)).not.toThrow();
  });

  it('fails on a lying body, naming the operation and the path of the mismatch', () => {
    expect(() => checkResponse('GET', '/v1/api/credits', 200, { ...credits, balance: '500' })).toThrow(
      /getCredits \(GET \/v1\/api\/credits\) 200.*\/balance must be integer/,
    );
    const missing = { ...credits, movements: [{ ...credits.movements[0], detail: undefined }] };
    expect(() => checkResponse('GET', '/v1/api/credits', 200, JSON.parse(JSON.stringify(missing)))).toThrow(
      /\/movements\/0 must have required property 'detail'/,
    );
  });

  it('fails on a property a closed record does not declare', () => {
    expect(() => checkResponse('GET', '/v1/api/credits', 200, { ...credits, bonus: 1 })).toThrow(/must NOT have additional properties 'bonus'/);
  });

  it('fails on a status the registry does not declare for the operation', () => {
    expect(() => checkResponse('POST', '/v1/api/prospecting/templates', 200, {})).toThrow(/declares no 200 response/);
  });

  it('holds every error, on a registry route or off it, to {error, message}', () => {
    expect(() => checkResponse('GET', '/v1/api/credits', 401, { error: 'unauthorized', message: 'No key.' })).not.toThrow();
    expect(() => checkResponse('GET', '/v1/nowhere', 404, { error: 'not_found', message: 'Not found.' })).not.toThrow();
    expect(() => checkResponse('GET', '/v1/nowhere', 404, { error: 'not_found' })).toThrow(/message/);
    expect(() => checkResponse('GET', '/v1/api/credits', 401, { error: 'unauthorized', stack: '…' })).toThrow(/error body of getCredits/);
    expect(() => checkResponse('GET', '/v1/nowhere', 404, 'Not Found')).toThrow(/error body of GET \/v1\/nowhere 404/);
  });

  it('checks each stream event against the stream schema of its kind', () => {
    const page = { event: 'page', data: { source: 'demo', results: [] } };
    const done = { event: 'done', data: { total: 0, sources: [{ source: 'demo', count: 0 }], creditsCharged: 0 } };
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [page, done])).not.toThrow();
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [page, { event: 'done', data: { total: 0 } }])).toThrow(
      /event 1 \(`done`\) of streamPeople.*must have required property 'sources'/,
    );
    // The company stream's done also says what the search understood.
    expect(() => checkResponse('POST', '/v1/api/companies/search/stream', 200, '', [done])).toThrow(/activities/);
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [{ event: 'progress', data: {} }])).toThrow(
      /event `progress`, which is not in its contract/,
    );
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [page])).toThrow(/exactly one `done`/);
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [done, page])).toThrow(/exactly one `done`/);
    const failed = { event: 'error', data: { error: 'internal_error', message: 'The stream failed.' } };
    expect(() => checkResponse('POST', '/v1/api/sourcing/people/stream', 200, '', [page, failed])).not.toThrow();
  });
});

type Node = Record<string, unknown>;

/** Every schema node inside `schema`, with where it is. */
function* nodes(schema: unknown, at: string): Generator<[Node, string]> {
  if (typeof schema !== 'object' || schema === null) return;
  const node = schema as Node;
  yield [node, at];
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, unknown>)) yield* nodes(child, `${at}.${name}`);
  for (const [pattern, child] of Object.entries((node.patternProperties ?? {}) as Record<string, unknown>)) yield* nodes(child, `${at}[${pattern}]`);
  if (typeof node.additionalProperties === 'object') yield* nodes(node.additionalProperties, `${at}.*`);
  if (node.items) yield* nodes(node.items, `${at}[]`);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const [i, child] of ((node[key] ?? []) as unknown[]).entries()) yield* nodes(child, `${at}|${key}[${i}]`);
  }
}

/** The success schemas of an operation: each response, and each of a stream's event payloads. */
function successSchemas(id: string, op: Operation): Array<[unknown, string]> {
  return [
    // A file (an export) is not JSON: its test checks its rows.
    ...Object.entries(op.file ? {} : op.responses).map(([status, schema]): [unknown, string] => [schema, `${id} ${status}`]),
    ...Object.entries(op.stream?.events ?? {}).map(([event, schema]): [unknown, string] => [schema, `${id} ${event}`]),
  ];
}

describe('every operation has a full response schema', () => {
  const cases = Object.entries(registry).flatMap(([id, op]) => successSchemas(id, op));

  it('describes an object, and says of every object schema whether it allows other properties', () => {
    const problems: string[] = [];
    for (const [schema, name] of cases) {
      if ((schema as Node).type !== 'object') problems.push(`${name}: not an object`);
      for (const [node, at] of nodes(schema, name)) {
        if (node.type !== 'object') continue;
        if (!('additionalProperties' in node)) problems.push(`${at}: additionalProperties is not said`);
        const declared = Object.keys((node.properties ?? {}) as object).length + Object.keys((node.patternProperties ?? {}) as object).length;
        if (declared === 0) problems.push(`${at}: an object without a single property`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('describes what it returns: every property has a description, or is a named or described schema', () => {
    const undescribed: string[] = [];
    for (const [schema, name] of cases) {
      for (const [node, at] of nodes(schema, name)) {
        for (const [prop, child] of Object.entries((node.properties ?? {}) as Record<string, Node>)) {
          if (!child.description && !child.title) undescribed.push(`${at}.${prop}`);
        }
      }
    }
    expect(undescribed).toEqual([]);
  });
});
