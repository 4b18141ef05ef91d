/**
 * What the enrichment memory gives a request and keeps from it, for every operation that runs
 * the cascade over a subject (`enrich`, each lead of `hydratePeople`): the stored fields laid
 * over what was sent, and what a cascade found (and looked for in vain) written back.
 */
import type { Field, FieldValues } from '../providers/fields.ts';
import type { ProviderSlot } from '../providers/providers.ts';
import type { enrichRecord } from './enrich-record.ts';
import type { EnrichMemory, MemoryKey, Recall, StoredField } from './memory.ts';

/** What a request that asked for fresh data (maxAge 0, forceRefresh) recalls: nothing. */
export const NOTHING_RECALLED: Recall = { fields: {}, covered: [], enrichedAt: null };

/** The record as sent, with the stored fields it lacks, each with its provider and confidence. */
export function recalledRecord(cleaned: FieldValues, recall: Recall): { record: FieldValues; sources: Partial<Record<Field, string>>; confidence: Partial<Record<Field, number>> } {
  const record: FieldValues = { ...cleaned };
  const sources: Partial<Record<Field, string>> = {};
  const confidence: Partial<Record<Field, number>> = {};
  for (const field of Object.keys(cleaned) as Field[]) sources[field] = 'input';
  for (const [field, s] of Object.entries(recall.fields) as Array<[Field, StoredField]>) {
    if (record[field] !== undefined) continue;
    record[field] = s.value;
    sources[field] = s.source;
    if (s.confidence !== undefined) confidence[field] = s.confidence;
  }
  return { record, sources, confidence };
}

/**
 * Stores what the providers found (not what was sent), and the wanted fields looked for in vain
 * when every provider reached answered (a failure or a skip may have hidden a value), as of `now`
 * (the answer's `enrichedAt`, which a repeat answered from memory gives again).
 */
export async function remember(
  memory: EnrichMemory,
  key: MemoryKey,
  workspaceId: string,
  result: Awaited<ReturnType<typeof enrichRecord>>,
  goals: readonly Field[],
  slots: Map<string, ProviderSlot>,
  now: Date,
): Promise<void> {
  const found: Partial<Record<Field, StoredField>> = {};
  for (const [field, source] of Object.entries(result.sources) as Array<[Field, string]>) {
    if (source === 'input') continue;
    const confidence = result.confidence[field];
    found[field] = { value: result.record[field], source, at: now, cost: slots.get(source)?.cost ?? 0, ...(confidence !== undefined ? { confidence } : {}) };
  }
  const clean = result.attempts.length > 0 && result.attempts.every((a) => a.outcome === 'found' || a.outcome === 'not_found');
  const inVain = clean ? goals.filter((f) => result.record[f] === undefined) : [];
  if (Object.keys(found).length > 0 || inVain.length > 0) await memory.store(key, workspaceId, found, inVain, now);
}
