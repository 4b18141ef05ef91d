/**
 * The tool list as a model pays for it: every MCP client puts `tools/list` into its model's
 * context on every conversation, so its whole JSON answer for an API key holding every scope must
 * stay within 48 KB on both protocol revisions (it was 158 KB), with every tool still described.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactInputSchema, compactOutputSchema } from '../../../server/tools/compact-schema.ts';
import { tools } from '../../../server/tools/tools.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { rawMcp, type Revision } from '../../helpers/mcp.ts';

const BUDGET_BYTES = 48_000;

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function toolsList(apiKey: string, revision: Revision) {
  const { status, bytes, body } = await rawMcp(app.url, apiKey, revision, 'tools/list');
  expect(status).toBe(200);
  return { bytes, body: body as { result: { tools: Array<{ name: string; description: string; outputSchema: object }> } } };
}

describe('tools/list', () => {
  it(`is at most ${BUDGET_BYTES} bytes for an API key holding every scope, on both revisions, every tool described`, async () => {
    const { apiKey } = await app.workspace();
    for (const revision of ['2025-11-25', '2026-07-28'] as const) {
      const { bytes, body } = await toolsList(apiKey, revision);
      expect(body.result.tools.map((t) => t.name)).toEqual([...tools.keys()]);
      expect(bytes, `${revision}: ${bytes} bytes`).toBeLessThanOrEqual(BUDGET_BYTES);
      for (const tool of body.result.tools) {
        expect(tool.description.length, tool.name).toBeGreaterThan(20);
        expect(tool.outputSchema, tool.name).toMatchObject({ type: 'object' });
      }
    }
  });
});

describe('compact schemas', () => {
  it('an output schema keeps the answer’s fields, their types and the required ones; records are objects without their fields', () => {
    const schema = {
      type: 'object',
      description: 'A page.',
      additionalProperties: false,
      required: ['results', 'total'],
      properties: {
        results: { type: 'array', description: 'Rows.', items: { type: 'object', properties: { cnpj: { type: 'string', pattern: '^\\d{14}$' } }, required: ['cnpj'] } },
        total: { type: 'integer', minimum: 0 },
        status: { anyOf: [{ const: 'ok', type: 'string' }, { const: 'partial', type: 'string' }] },
        note: { anyOf: [{ type: 'string', maxLength: 10 }, { type: 'null' }] },
        owner: { anyOf: [{ type: 'object', properties: { name: { type: 'string' } } }, { type: 'null' }] },
        tags: { type: 'object', patternProperties: { '^(.*)$': { type: 'string' } } },
        anything: {},
      },
    };
    expect(compactOutputSchema(schema)).toEqual({
      type: 'object',
      required: ['results', 'total'],
      properties: {
        results: { type: 'array', items: { type: 'object' } },
        total: { type: 'integer' },
        status: { type: 'string' },
        note: { type: ['string', 'null'] },
        owner: { type: ['object', 'null'] },
        tags: { type: 'object' },
        anything: {},
      },
    });
  });

  it('an input schema keeps descriptions, enums, small limits and required fields; drops what only the validator needs (an unknown field is refused when called)', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      required: ['cnpjs'],
      properties: {
        cnpjs: { type: 'array', minItems: 1, maxItems: 500, description: 'CNPJs.', items: { type: 'string', maxLength: 40 } },
        limit: { type: 'integer', minimum: 1, maximum: 20 },
        budget: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
        since: { type: 'string', format: 'date', description: 'YYYY-MM-DD.' },
        status: { type: 'string', enum: ['ATIVA', 'BAIXADA'] },
        name: { anyOf: [{ type: 'string', maxLength: 5000 }, { type: 'null' }] },
        filter: { type: 'object', additionalProperties: false, properties: { year: { type: 'integer' } } },
      },
    };
    expect(compactInputSchema(schema)).toEqual({
      type: 'object',
      required: ['cnpjs'],
      properties: {
        cnpjs: { type: 'array', minItems: 1, maxItems: 500, description: 'CNPJs.', items: { type: 'string' } },
        limit: { type: 'integer', minimum: 1, maximum: 20 },
        budget: { type: 'integer', minimum: 0 },
        since: { type: 'string', description: 'YYYY-MM-DD.' },
        status: { type: 'string', enum: ['ATIVA', 'BAIXADA'] },
        name: { type: ['string', 'null'] },
        filter: { type: 'object', properties: { year: { type: 'integer' } } },
      },
    });
  });
});
