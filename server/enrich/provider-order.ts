/**
 * `providerOrder` as sent (decisions.md, "order per field"): either one list for every field, or
 * an object giving a field its own list (`{"email": ["hunter", "apollo"], "phone": ["apollo"]}`),
 * a field not named following the default order. The schema only says "a list or an object of
 * lists", so that an unknown name is refused here with a message that names it, the same for
 * both forms.
 */
import { ServiceError } from '../lib/errors.ts';
import { ENRICH_FIELDS, PROVIDER_IDS, type ProviderId } from '../../shared/schemas/enrichment.ts';
import { isField, type Field } from '../providers/fields.ts';
import type { ProviderSlot } from '../providers/providers.ts';
import type { Attempt } from './cascade.ts';

export type ProviderOrderInput = readonly string[] | Readonly<Record<string, readonly string[]>>;

/** The order checked: the list for every field, and each named field's own list. */
export interface ProviderOrder {
  all: ProviderId[];
  perField: Partial<Record<Field, ProviderId[]>>;
}

const isProvider = (id: string): id is ProviderId => (PROVIDER_IDS as readonly string[]).includes(id);

function providers(list: readonly string[], at: string): ProviderId[] {
  return list.map((id, i) => {
    if (!isProvider(id)) throw new ServiceError('invalid_request', `${at}[${i}] must be one of: ${PROVIDER_IDS.join(', ')}`);
    return id;
  });
}

/** The order sent, checked: an unknown provider or field is a 400 naming it. */
export function parseProviderOrder(input: ProviderOrderInput | undefined): ProviderOrder {
  if (input === undefined) return { all: [], perField: {} };
  if (Array.isArray(input)) return { all: providers(input, 'providerOrder'), perField: {} };
  const perField: ProviderOrder['perField'] = {};
  for (const [field, list] of Object.entries(input as Record<string, readonly string[]>)) {
    if (!isField(field)) {
      throw new ServiceError('invalid_request', `providerOrder.${field} is not a field; fields are: ${ENRICH_FIELDS.join(', ')}`);
    }
    perField[field] = providers(list, `providerOrder.${field}`);
  }
  return { all: [], perField };
}

/** Every provider the order names, for `onlyListed`. */
export function namedProviders(order: ProviderOrder): ProviderId[] {
  return [...new Set([...order.all, ...Object.values(order.perField).flat()])];
}

/** Listed providers first, in the order given, then (unless `onlyListed`) the rest by cost and quality. */
export function providerWalk(
  slots: Map<string, ProviderSlot>,
  listed: readonly string[] = [],
  onlyListed = false,
): { order: ProviderSlot[]; unavailable: Attempt[] } {
  const order: ProviderSlot[] = [];
  const unavailable: Attempt[] = [];
  for (const id of new Set(listed)) {
    const slot = slots.get(id);
    if (slot) order.push(slot);
    else unavailable.push({ provider: id, outcome: 'skipped', fields: [], cost: 0, ms: 0, error: 'not configured' });
  }
  if (!onlyListed) {
    const rest = [...slots.values()]
      .filter((slot) => !order.includes(slot))
      .sort((a, b) => a.cost - b.cost || b.provider.quality - a.provider.quality);
    order.push(...rest);
  }
  return { order, unavailable };
}

/**
 * Each field's walk: its own list first when it has one, then (unless `onlyListed`) the default
 * order; a field not named walks the default order (the common list first, when one was sent).
 */
export function fieldWalks(
  slots: Map<string, ProviderSlot>,
  order: ProviderOrder,
  onlyListed: boolean,
): { order: ProviderSlot[]; orderFor: (field: Field) => readonly ProviderSlot[]; unavailable: Attempt[] } {
  const named = namedProviders(order);
  const base = providerWalk(slots, order.all, onlyListed && Object.keys(order.perField).length === 0);
  const unavailable = [...base.unavailable];
  const noted = new Set(unavailable.map((a) => a.provider));
  const walks = new Map<Field, ProviderSlot[]>();
  for (const [field, list] of Object.entries(order.perField) as Array<[Field, ProviderId[]]>) {
    const own = providerWalk(slots, list, onlyListed);
    for (const attempt of own.unavailable) {
      if (noted.has(attempt.provider)) continue;
      noted.add(attempt.provider);
      unavailable.push(attempt);
    }
    walks.set(field, own.order);
  }
  // With per-field lists and onlyListed, a field not named may still use any provider named somewhere.
  const fallback = onlyListed && Object.keys(order.perField).length > 0 ? providerWalk(slots, named, true).order : base.order;
  const all = [...new Set([...fallback, ...[...walks.values()].flat()])];
  return { order: all, orderFor: (field) => walks.get(field) ?? fallback, unavailable };
}
