/**
 * The fields a cascade can fill, person and company alike, flat so that `goalFields`, a
 * provider's inputs and outputs, and the enriched record all use the same names. The lists are
 * part of the contract, so they live with the schemas.
 */
export { COMPANY_FIELDS, ENRICH_FIELDS, PERSON_FIELDS } from '../../shared/schemas/enrichment.ts';
import type { Static } from '@sinclair/typebox';
import { cleanText } from './clean-text.ts';
import { ENRICH_FIELDS, type EnrichedFields } from '../../shared/schemas/enrichment.ts';

export type Field = (typeof ENRICH_FIELDS)[number];

/**
 * A record being enriched: any subset of the fields. Values are unknown: hydrate passes a lead's
 * own values through as the client sent them.
 */
export type FieldValues = Partial<Record<Field, unknown>>;

/** Each field's value as the contract types it (`record` of an enrich answer). */
export type FoundFields = Static<typeof EnrichedFields>;

/** What a provider answers: contract-typed values, null (or absent) for what it does not know. */
export type ProviderFields = { [F in Field]?: FoundFields[F] | null };

/**
 * What an email status means here. Only a verifier's "valid" makes an email `verified`; a
 * catch-all domain (`accept_all`) or a provider's guess stays short of it.
 */
export const EMAIL_STATUS = ['verified', 'accept_all', 'invalid', 'unverified'] as const;
export type EmailStatus = (typeof EMAIL_STATUS)[number];

export const isField = (name: string): name is Field => (ENRICH_FIELDS as readonly string[]).includes(name);

/** A value worth keeping: not null, not blank, not an empty list. */
export function hasValue(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'string') return value.trim() !== '';
  if (Array.isArray(value)) return value.length > 0;
  return true;
}

/** The fields of `values` that hold something, without the empty ones. */
export function present(values: FieldValues): FieldValues {
  const out: FieldValues = {};
  for (const [key, value] of Object.entries(values)) if (isField(key) && hasValue(value)) out[key] = value;
  return out;
}

/**
 * A provider's string field, cleaned (no NUL, no lone surrogate) and trimmed; null for anything
 * else or blank (providers answer `""`, `null` or nothing alike).
 */
export const textOf = (value: unknown): string | null => (typeof value === 'string' ? cleanText(value) || null : null);
