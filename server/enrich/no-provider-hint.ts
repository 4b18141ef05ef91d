/**
 * What to say when an enrichment could try no provider (issue 29, "Running it for real"): which
 * keys would let which providers find which of the wanted fields, so an operator or a workspace
 * knows what to set instead of reading an empty answer.
 */
import { hasValue, type Field, type FieldValues } from '../providers/fields.ts';
import type { Provider } from '../providers/data-provider.ts';
import type { ProviderSlot } from '../providers/providers.ts';

/** Null when nothing is missing; else one sentence naming keys and the fields each would bring. */
export function noProviderHint(
  all: readonly Provider[],
  slots: Map<string, ProviderSlot>,
  record: FieldValues,
  goals: readonly Field[],
): string | null {
  const missing = goals.filter((f) => !hasValue(record[f]));
  if (missing.length === 0) return null;
  const byKey = new Map<string, { providers: string[]; fields: Set<Field> }>();
  for (const provider of all) {
    if (slots.has(provider.id)) continue;
    const fields = provider.outputs.filter((f) => missing.includes(f));
    if (fields.length === 0) continue;
    const key = provider.keyVariable ?? provider.switchVariable ?? null;
    if (!key) continue;
    const entry = byKey.get(key) ?? { providers: [], fields: new Set<Field>() };
    entry.providers.push(provider.id);
    fields.forEach((f) => entry.fields.add(f));
    byKey.set(key, entry);
  }
  const needs = `No provider could be tried for ${missing.length === goals.length && goals.length > 5 ? 'the wanted fields' : missing.join(', ')}`;
  if (byKey.size === 0) {
    return `${needs}: the providers configured here cannot work from the fields sent (see GET /v1/api/providers for what each one needs).`;
  }
  const options = [...byKey].map(
    ([key, { providers, fields }]) => `${key} (${providers.join(', ')}) would give ${[...fields].join(', ')}`,
  );
  return `${needs}. ${options.join('; ')}. Set the variable on the server, or store the workspace's own key (npx prospecta provider-key set).`;
}
