/**
 * What the body reader refuses in every body (body.ts: a NUL character in any string or property
 * name), written into the request schemas OpenAPI shows, so that a request the document calls
 * valid is one the server takes. A named record changed by it is named `<title>Input`: the same
 * record in an answer makes no such promise (a provider or a model may send a NUL).
 */
import { NOT_BLANK } from '../../shared/schemas/templates.ts';
import { NUL_FREE_NOT_BLANK_PATTERN, NUL_FREE_PATTERN } from './body.ts';

type Node = Record<string, unknown>;

/** Keys whose values are data (or names), not schemas. */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples', 'required', 'description', 'title', 'pattern', 'format', 'type']);

const JSON_VALUE_INPUT = 'JsonValueInput';
const jsonValue = { $ref: `#/components/schemas/${JSON_VALUE_INPUT}` };
/** What an open object's other properties may hold in a request: any JSON, and no NUL anywhere in it. */
const JSON_VALUE_WITHOUT_NUL = {
  title: JSON_VALUE_INPUT,
  description: 'Any JSON value, without a NUL character in its strings or property names.',
  anyOf: [
    { type: 'string', pattern: NUL_FREE_PATTERN },
    { type: ['number', 'boolean', 'null'] },
    { type: 'array', items: jsonValue },
    { type: 'object', propertyNames: { pattern: NUL_FREE_PATTERN }, additionalProperties: jsonValue },
  ],
};

/** `schema` as a request body: every free string and every open map's names without NUL, nor any value of an open object. */
export function nulFreeInput(schema: unknown): unknown {
  return rewrite(schema).node;
}

function rewrite(schema: unknown): { node: unknown; changed: boolean } {
  if (Array.isArray(schema)) {
    const items = schema.map(rewrite);
    return { node: items.map((i) => i.node), changed: items.some((i) => i.changed) };
  }
  if (typeof schema !== 'object' || schema === null) return { node: schema, changed: false };
  let changed = false;
  const out: Node = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYS.has(key)) {
      out[key] = value;
    } else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Node).map(([name, property]) => {
          const inner = rewrite(property);
          changed ||= inner.changed;
          return [name, inner.node];
        }),
      );
    } else {
      const inner = rewrite(value);
      changed ||= inner.changed;
      out[key] = inner.node;
    }
  }
  if (out.type === 'string' && out.enum === undefined && out.const === undefined && out.format === undefined) {
    if (out.pattern === undefined) out.pattern = NUL_FREE_PATTERN;
    else if (out.pattern === NOT_BLANK) out.pattern = NUL_FREE_NOT_BLANK_PATTERN;
    changed ||= out.pattern === NUL_FREE_PATTERN || out.pattern === NUL_FREE_NOT_BLANK_PATTERN;
  }
  if (out.type === 'object' && out.propertyNames === undefined && (out.additionalProperties !== false || out.patternProperties !== undefined)) {
    out.propertyNames = { pattern: NUL_FREE_PATTERN };
    changed = true;
  }
  // A lead's own fields, say, may be any JSON: but not one with a NUL in it, deep down.
  if (out.type === 'object' && out.additionalProperties === true) out.additionalProperties = JSON_VALUE_WITHOUT_NUL;
  if (changed && typeof out.title === 'string') out.title = `${out.title}Input`;
  return { node: out, changed };
}
