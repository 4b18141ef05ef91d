/**
 * Issue 20 (6): every number a request may carry has an upper bound, so no client can store a
 * value past what JSON carries exactly (9007199254740993 read as …992) or what the service means.
 */
import { describe, expect, it } from 'vitest';
import { operations } from '../../shared/operations/index.ts';
import type { Operation } from '../../shared/operations/types.ts';

function unbounded(schema: unknown, at: string, out: string[]): string[] {
  if (!schema || typeof schema !== 'object') return out;
  const s = schema as Record<string, unknown>;
  if ((s.type === 'integer' || s.type === 'number') && s.maximum === undefined && s.exclusiveMaximum === undefined) out.push(at);
  for (const [key, value] of Object.entries(s)) if (value && typeof value === 'object') unbounded(value, `${at}/${key}`, out);
  return out;
}

describe('request schemas', () => {
  it('bound every integer and number from above', () => {
    const found: string[] = [];
    for (const [id, op] of Object.entries(operations) as Array<[string, Operation]>) {
      for (const part of ['params', 'query', 'body'] as const) unbounded(op.request[part], `${id}.${part}`, found);
    }
    expect(found).toEqual([]);
  });
});
