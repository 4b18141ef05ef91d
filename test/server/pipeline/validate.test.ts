import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { operations } from '../../../shared/operations/index.ts';
import { compileValidators, type RequestPart } from '../../../server/pipeline/validate.ts';
import { validationCases, validEdgeCases, validInputs } from '../http/validation-cases.ts';

const validate = compileValidators(operations);
const label = (input: unknown) => JSON.stringify(input).slice(0, 80);

describe('request validation', () => {
  it('has a valid input for every operation', () => {
    expect(Object.keys(validInputs).sort()).toEqual(Object.keys(operations).sort());
  });

  it.each(Object.entries(validInputs))('accepts the valid input of %s', (op, parts) => {
    for (const part of ['params', 'query', 'body'] as RequestPart[]) {
      if (parts[part] === undefined) continue;
      expect(validate(op, part, parts[part])).toEqual({ ok: true, value: parts[part] });
    }
  });

  it.each(validEdgeCases.map((c) => [c.op, c.part, label(c.input), c] as const))(
    'accepts %s %s at the edge of a limit: %s',
    (_op, _part, _label, { op, part, input }) => {
      expect(validate(op, part, input)).toMatchObject({ ok: true });
    },
  );

  it.each(validationCases.map((c) => [c.op, c.part, c.field, c] as const))(
    'rejects %s %s: %s',
    (_op, _part, _field, { op, part, input, field }) => {
      const result = validate(op, part, input);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.message).toContain(field);
    },
  );

  it('coerces query strings and path params to their declared types, never bodies', () => {
    const page = Type.Object({ page: Type.Integer() });
    const listThings = {
      ...operations.listProspects,
      path: '/api/things/{page}',
      request: { params: page, query: page, body: page },
    };
    const check = compileValidators({ listThings });
    expect(check('listThings', 'params', { page: '2' })).toEqual({ ok: true, value: { page: 2 } });
    expect(check('listThings', 'query', { page: '2' })).toEqual({ ok: true, value: { page: 2 } });
    expect(check('listThings', 'body', { page: '2' })).toEqual({ ok: false, message: 'page must be an integer', problems: ['page must be an integer'] });
  });

  it('names every violation at once, up to 10, and the known property an unknown one resembles', () => {
    expect(validate('searchCompanies', 'body', { limit: 100, state: 'Sao Paulo' })).toMatchObject({
      ok: false,
      message: 'state must be exactly 2 characters; limit must be <= 20',
    });
    expect(validate('searchCompanies', 'body', { simplesOption: true })).toMatchObject({ message: 'unknown property simplesOption: did you mean simpleOption?' });
    expect(validate('searchCompanies', 'body', { SIMPLEOPTION: true, stat: 'SP', zzz: 1 })).toMatchObject({
      message: 'unknown property SIMPLEOPTION: did you mean simpleOption?; unknown property stat: did you mean state?; unknown property zzz',
    });
    // Nested: the resemblance is to the properties of the object the name is in.
    expect(validate('createSheet', 'body', { name: 'S', rows: [{ rowId: 'r1', valeus: {} }] })).toMatchObject({
      message: expect.stringContaining('unknown property rows[0].valeus: did you mean rows[0].values?'),
    });
    const many = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`unknown${i}`, 1]));
    const result = validate('searchCompanies', 'body', many);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message.split('; ')).toHaveLength(11);
      expect(result.message).toMatch(/unknown property unknown9; and 4 more problems$/);
    }
  });

  it('reports a failed anyOf once, by the branch of the value\'s type, for each item it failed', () => {
    const result = validate('enrich', 'body', { fullName: 'Ana', providerOrder: ['hunter', 7, 8] });
    expect(result).toMatchObject({ ok: false, message: 'providerOrder[1] must be a string; providerOrder[2] must be a string' });
  });

  it('does not rewrite the object it is given', () => {
    const query = Object.freeze({ status: 'ready' });
    expect(validate('listProspects', 'query', query)).toEqual({ ok: true, value: { status: 'ready' } });
  });

  it('reads nothing from a part the operation does not declare', () => {
    expect(validate('getCredits', 'query', { anything: 'goes' })).toEqual({ ok: true, value: {} });
  });

  it('throws on an operation id that is not in the registry, an inherited name included', () => {
    expect(() => validate('getCredit', 'query', {})).toThrow('No operation getCredit in the registry');
    expect(() => validate('constructor', 'query', {})).toThrow('No operation constructor in the registry');
  });

  // Validators are compiled when an operation is first called; here every one is, so a schema
  // that Ajv's strict mode refuses fails this test rather than that operation's first request.
  it.each(Object.keys(operations))('compiles every request schema of %s', (op) => {
    expect(() => validate(op, 'body', {})).not.toThrow();
  });

  it('refuses a schema strict mode does not accept, when its operation is first called', () => {
    const listThings = { ...operations.listProspects, request: { query: { type: 'object', properties: {}, unknownKeyword: 1 } } };
    const check = compileValidators({ listThings } as never);
    expect(() => check('listThings', 'query', {})).toThrow(/unknownKeyword/);
  });
});
