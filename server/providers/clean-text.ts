/**
 * Text from outside as prospecta keeps it (decisions.md, "Enrichment"): without NUL characters or
 * lone surrogates (which no store, JSON consumer or spreadsheet takes well), and trimmed. The one
 * rule for a provider's text, whether an adapter reads it (`textOf`) or the cascade checks an
 * answer (`clean-found.ts`).
 */
const NUL = /\u0000/g;
/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export const cleanText = (text: string): string => text.replace(NUL, '').replace(LONE_SURROGATE, '').trim();
