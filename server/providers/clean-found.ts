/**
 * What a provider answered, made fit to be stored, charged and answered (decisions.md,
 * "Enrichment"): every text without NUL or lone surrogates, and trimmed; every number finite;
 * then each field held to its schema in the contract (`EnrichedFields`: its type, its maxLength,
 * its format). A field that fails is left out, never kept as null or cut short: a record holds
 * what the schema promises or nothing, and a provider whose every field was left out returned no
 * data, so it is not paid for. The cascade runs every provider's answer through here, so no
 * adapter has to remember it, and the limits are the schema's, so they have one home.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { EnrichedFields } from '../../shared/schemas/enrichment.ts';
import { cleanText } from './clean-text.ts';
import { hasValue, isField, type Field, type ProviderFields } from './fields.ts';

/** Text and numbers as no schema should see them: any field holding one of these fails. */
const FAILED = Symbol('failed');

/** Strings scrubbed and trimmed, deep; FAILED for a number that is not finite (1e309, NaN). */
function scrub(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : FAILED;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      const clean = scrub(item);
      if (clean === FAILED) return FAILED;
      out.push(clean);
    }
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const clean = scrub(item);
      if (clean === FAILED) return FAILED;
      out[key] = clean;
    }
    return out;
  }
  return value;
}

let validators: Map<Field, ValidateFunction> | undefined;

/** Each field's schema compiled once, when the first answer is cleaned. */
function validatorOf(field: Field): ValidateFunction {
  if (!validators) {
    const ajv = new Ajv({ strict: false });
    ajvFormats.default(ajv);
    validators = new Map();
    for (const [name, schema] of Object.entries(EnrichedFields.properties)) {
      if (isField(name)) validators.set(name, ajv.compile(schema));
    }
  }
  return validators.get(field)!;
}

/** The fields of a provider's answer that hold a value the contract promises, cleaned; the others left out. */
export function cleanFound(fields: ProviderFields): ProviderFields {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (!isField(field) || value === null || value === undefined) continue;
    const clean = scrub(value);
    if (clean === FAILED || !hasValue(clean) || !validatorOf(field)(clean)) continue;
    out[field] = clean;
  }
  return out as ProviderFields;
}
