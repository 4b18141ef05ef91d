/**
 * Query planning: how a query reaches the documents that may match its filter, through an index,
 * the ids in order, or every document. It reads the table's storage (see table.ts) and changes
 * none of it but for building, through the table, the deferred indexes a query needs.
 */
import type { Doc } from './codec.ts';
import { equalityValues, rangesOf, type Access, type Index } from './indexes.ts';
import type { Bound, SortedKeys } from './sorted-keys.ts';

/**
 * What a query costs is mostly memory latency. Fetching and testing a document is the unit; a hash
 * lookup costs about a third of it, and a step through rows (or ids in order) about this much.
 */
const VISIT_COST = 1 / 16;
const LOOKUP_COST = 1 / 3;

/** Candidates tested to learn how many documents match. */
const SAMPLE = 128;

/**
 * What the planner reads of a table: its own row map, not a copy, and its documents through
 * `doc`, since a bulk-loaded one is still encoded and parsed only when fetched.
 */
export interface Stored {
  /** The document at a stored row (a block's encoded document is parsed at each call). */
  doc(row: number): Doc;
  readonly rowOf: ReadonlyMap<string, number>;
  byId(id: string): Doc | undefined;
  /** Every document, in natural order. */
  all(): Iterable<Doc>;
  /**
   * What fetching and testing a document costs, in the unit above: 1 for documents kept as
   * objects, far more where they are parsed from a block at each fetch (see block.ts).
   */
  fetchCost(): number;
  /** The ids in order, or undefined while the table is too small for that to pay. */
  idOrder(): SortedKeys<string> | undefined;
  /** The indexes, once those deferred until a query filters on their field are built for these conditions. */
  indexes(conditions: ReadonlyMap<string, unknown[]>): Iterable<Index>;
}

/** The conditions a filter puts on each field, at its top level and in `$and`s: all must hold. */
function fieldConditions(filter: Record<string, unknown>, out = new Map<string, unknown[]>()): Map<string, unknown[]> {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const part of condition) if (typeof part === 'object' && part !== null) fieldConditions(part as Record<string, unknown>, out);
    } else if (!field.startsWith('$')) {
      out.set(field, [...(out.get(field) ?? []), condition]);
    }
  }
  return out;
}

/** How a query reaches the documents that may match it. */
export interface Plan {
  /** Documents that may match, each once: through the most selective index, or all of them. */
  docs(): Iterable<Doc>;
  /**
   * The first `count` documents passing `test` in `_id` order, found by walking the ids in order;
   * undefined when that is not expected to beat `docs` (the caller then sorts those).
   */
  firstById(test: (doc: Doc) => boolean, count: number, descending: boolean): Doc[] | undefined;
}

/**
 * How to find the documents of `table` that may match `filter`. Each index (and `_id`) offers an
 * access for the conditions it can serve; the smallest drives, and the others that a few hash
 * lookups can test are checked before a document is fetched, which costs more (memory, not CPU,
 * is what a query over a large table waits for).
 */
export function planQuery(filter: Record<string, unknown>, table: Stored): Plan {
  // Documents by id need no index: a lookup each is as cheap as it gets.
  const ids = equalityValues(filter._id);
  if (ids) return { docs: () => byIds(table, ids), firstById: () => undefined };
  const conditions = fieldConditions(filter);
  const indexes = table.indexes(conditions);
  const conditionsOf = (field: string) => conditions.get(field) ?? [];
  const accesses: Access[] = [];
  const order = conditions.has('_id') ? table.idOrder() : undefined;
  let idRange: { lower?: Bound<string>; upper?: Bound<string>; access: Access } | undefined;
  for (const condition of conditionsOf('_id')) {
    // Ids are strings, which a number range never matches (and the filter test rejects).
    for (const [lower, upper] of order ? (rangesOf(condition, true) as Array<[Bound<string>?, Bound<string>?]>) : []) {
      if (typeof (lower ?? upper)!.value !== 'string') continue;
      const estimate = order!.count(lower, upper);
      const access = { estimate, matches: estimate, rows: () => rowsOf(table, order!.scan(lower, upper)), probes: 0 };
      if (!idRange || access.estimate < idRange.access.estimate) idRange = { lower, upper, access };
    }
  }
  if (idRange) accesses.push(idRange.access);
  const size = Math.max(1, table.rowOf.size);
  for (const index of indexes) {
    const access = index.access(conditionsOf, size);
    if (access) accesses.push(access);
  }
  const passing = (list: Access[]) => list.reduce((share, a) => share * Math.min(1, a.matches / size), 1);
  // Probing pays when its lookups cost less than the fetches it saves; the most selective goes first.
  const fetchCost = table.fetchCost();
  const probed = accesses
    .filter((a) => a.has && a.probes * LOOKUP_COST < fetchCost * (1 - passing([a])))
    .sort((a, b) => a.matches - b.matches);
  const probeCost = (list: Access[]) => list.reduce((sum, a) => sum + a.probes * LOOKUP_COST, 0);
  // The driver's rows are each probed by the others, and fetched when they pass.
  const costOf = (a: Access) => {
    const others = probed.filter((o) => o !== a);
    return a.estimate * (VISIT_COST + probeCost(others)) + a.matches * passing(others) * fetchCost;
  };
  const driver = accesses.reduce<Access | undefined>((best, a) => (best && costOf(best) <= costOf(a) ? best : a), undefined);
  const others = probed.filter((a) => a !== driver);
  const admitted = (row: number, list: Access[]) => list.every((a) => a.has!(row));

  const docs = (): Iterable<Doc> => (driver ? fetch(table, driver.rows(), (row) => admitted(row, others)) : table.all());

  const firstById = (test: (doc: Doc) => boolean, count: number, descending: boolean): Doc[] | undefined => {
    const ordered = idRange ? order : table.idOrder();
    if (!ordered) return undefined;
    // Walking the ids finds `count` matches after about count / share of them. Unless an `_id`
    // range drives, that is tried only when expected to cost well below taking the driver's
    // candidates, and given up at half of that; a small driver is simply taken.
    let budget = Infinity;
    if (driver && driver !== idRange?.access) {
      if (driver.estimate <= 4 * SAMPLE) return undefined;
      // Testing the first candidates of the most selective access tells the share that matches
      // far better than multiplying estimates: conditions correlate (a city and its state), and
      // some have no index.
      const source = accesses.reduce((best, a) => (a.matches < best.matches ? a : best));
      let sampled = 0;
      let matched = 0;
      for (const row of source.rows(false)) {
        if (sampled === SAMPLE) break;
        sampled++;
        if (test(table.doc(row))) matched++;
      }
      const share = (source.matches / size) * ((matched + 0.5) / Math.max(1, sampled));
      const cost = costOf(driver);
      const visit = VISIT_COST + probeCost(probed.slice(0, 1)) + passing(probed) * fetchCost;
      if ((count / share) * visit > cost / 2) return undefined;
      budget = cost / 2;
    }
    const found: Doc[] = [];
    for (const at of ordered.positions(idRange?.lower, idRange?.upper, descending)) {
      if ((budget -= VISIT_COST) < 0) return undefined;
      const row = ordered.valueAt(at) ?? table.rowOf.get(ordered.keyAt(at));
      if (row === undefined || !admitted(row, probed)) continue;
      const doc = table.doc(row);
      budget -= fetchCost;
      if (test(doc) && found.push(doc) === count) break;
    }
    return found;
  };

  return { docs, firstById };
}

function* byIds(table: Stored, ids: unknown[]): Generator<Doc> {
  for (const id of new Set(ids)) {
    const doc = typeof id === 'string' ? table.byId(id) : undefined;
    if (doc) yield doc;
  }
}

function* fetch(table: Stored, rows: Iterable<number>, admits: (row: number) => boolean): Generator<Doc> {
  for (const row of rows) if (admits(row)) yield table.doc(row);
}

/** The rows of the ids still stored. */
function* rowsOf(table: Stored, ids: Iterable<string>): Generator<number> {
  for (const id of ids) {
    const row = table.rowOf.get(id);
    if (row !== undefined) yield row;
  }
}
