/**
 * Schemas as a tool list can afford them. Every MCP client puts `tools/list` into its model's
 * context on every conversation; with the records' full schemas (prose, formats, limits, every
 * nested field) it was 158 KB, three quarters of it output schemas, the company record alone
 * repeated in four tools. The budget is 48 KB for a credential holding every scope.
 */
type Json = Record<string, unknown>;

/**
 * An output schema says the answer's own fields: their types, and which are always there. A
 * field holding a record (or a list of them) is said to be an object (or an array of objects),
 * without the record's fields: the answer's JSON text shows them to the model anyway, the SDK
 * clients validate `structuredContent` against this schema, which it still matches, and the
 * records' full schemas are in the OpenAPI document. No descriptions, enums, formats or bounds.
 */
export function compactOutputSchema(schema: Json): Json {
  return compactOutput(schema, true);
}

function compactOutput(schema: Json, root: boolean): Json {
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) return compactUnion(union.map((member) => compactOutput(member, root)));
  if (Array.isArray(schema.allOf)) return { allOf: (schema.allOf as Json[]).map((member) => compactOutput(member, root)) };
  const type = schema.type;
  if (type === 'object' && root) {
    const properties = Object.entries((schema.properties ?? {}) as Record<string, Json>);
    const out: Json = { type };
    if (properties.length) out.properties = Object.fromEntries(properties.map(([name, property]) => [name, compactOutput(property, false)]));
    if (Array.isArray(schema.required) && schema.required.length) out.required = schema.required;
    return out;
  }
  if (type === 'array') return schema.items ? { type, items: compactOutput(schema.items as Json, false) } : { type };
  return type === undefined ? {} : { type };
}

/** `T | null` and unions of plain types (TypeBox's enums are unions of literals) become one `type` list. */
function compactUnion(members: Json[]): Json {
  const types = new Set<string>();
  for (const member of members) {
    const keys = Object.keys(member);
    if (keys.length === 0) return {};
    if (keys.length > 1 || typeof member.type !== 'string') return { anyOf: members };
    types.add(member.type);
  }
  return { type: types.size === 1 ? [...types][0] : [...types] };
}

/**
 * Limits this large are guards against abuse, not guidance: a model never nears them, and the
 * pipeline enforces them either way.
 */
const GUARD_LIMIT = 1000;
const LIMIT_KEYWORDS = new Set(['maxItems', 'maximum', 'minItems', 'minimum', 'exclusiveMinimum', 'exclusiveMaximum']);
/** What the validator checks and the field's description already says in words. */
const VALIDATOR_ONLY = new Set(['format', 'pattern', 'minLength', 'maxLength', 'propertyNames', 'uniqueItems']);

/**
 * An input schema keeps what helps a model fill it in right the first time (descriptions, enums,
 * small limits, required fields) and loses what only the validator needs: guard limits, string
 * lengths, formats and patterns (which the descriptions state in words), `T | null` spelled as a
 * union, and `additionalProperties: false` (the tools' worth of it pushed the list past its budget;
 * an unknown argument is still refused, as a tool error naming it, which a model corrects from).
 * The pipeline validates against the registry's full schema.
 */
export function compactInputSchema(schema: Json): Json {
  return compactInput(schema);
}

function compactInput(schema: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties') out.properties = mapValues(value as Json, (property) => compactInput(property as Json));
    else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) out[key] = compactInput(value as Json);
    // A member's own description repeats the field's; without it, `T | null` folds into one type below.
    else if (key === 'anyOf' || key === 'oneOf' || key === 'allOf') {
      // A conditional (a job's item bodies, by its operation) is the validator's: the description says it in words.
      const members = (value as Json[]).filter((member) => key !== 'allOf' || !('if' in member));
      if (members.length > 0) out[key] = members.map((member) => withoutDescription(compactInput(member)));
    }
    else if (key === 'additionalProperties' && value === false) continue;
    // A nested record's name (`SheetRow`) is the OpenAPI document's; its description says what it is.
    else if (key === 'title') continue;
    // A record of any keys (TypeBox's `Record`) says so in fewer words.
    else if (key === 'patternProperties' && isAnyKey(value as Json)) out.additionalProperties = compactInput(Object.values(value as Json)[0] as Json);
    else if (VALIDATOR_ONLY.has(key)) continue;
    else if (LIMIT_KEYWORDS.has(key) && typeof value === 'number' && Math.abs(value) >= GUARD_LIMIT) continue;
    else if (key === 'description' && typeof value === 'string') out.description = firstSentenceIfLong(value);
    else out[key] = value;
  }
  // `{anyOf: [{type: 'string'}, {type: 'null'}]}` says `{type: ['string', 'null']}`.
  const union = out.anyOf as Json[] | undefined;
  if (union && union.every((member) => Object.keys(member).length === 1 && typeof member.type === 'string')) {
    delete out.anyOf;
    out.type = union.map((member) => member.type as string);
  }
  return out;
}

/**
 * A field's description longer than a line keeps its first sentence, which says what the field is;
 * the rest (examples, edge cases) is in the OpenAPI document. Every client pays for each byte of
 * the tool list in context, on every conversation.
 */
const LONG_DESCRIPTION = 80;
function firstSentenceIfLong(text: string): string {
  if (text.length <= LONG_DESCRIPTION) return text;
  const end = text.search(/(?<!\b(?:e\.g|i\.e|etc))\.\s/);
  return end > 0 && end < text.length - 1 ? text.slice(0, end + 1) : text;
}

const isAnyKey = (patterns: Json) => Object.keys(patterns).length === 1 && ['^(.*)$', '^[\\s\\S]*$', '^.*$'].includes(Object.keys(patterns)[0]!);

const withoutDescription = ({ description: _, ...rest }: Json): Json => rest;

const mapValues = (object: Json, f: (value: unknown) => unknown): Json => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, f(v)]));
