/**
 * The store's own `$set`/`$inc`/`$unset`/`$push`/`$pull` (plain-update.ts) against mingo's, on random documents
 * and updates: where it answers, the document (its keys in the same order) and whether it changed
 * are mingo's; where MongoDB's rules are subtle it leaves the update to mingo.
 */
import { update as mingoUpdate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { cloneValue, encode } from '../../../server/store/embedded/codec.ts';
import { plainUpdate } from '../../../server/store/embedded/plain-update.ts';
import { seededRandom, type SeededRandom } from '../../helpers/seeded-random.ts';

const FIELDS = ['a', 'b', 'n', 'list'] as const;
const PATHS = ['a', 'b', 'n', 'list', 'a.b', 'a.c', 'a.b.c', 'b.x', 'n.x', 'list.0', 'list.x', 'list.1x', 'z', 'z.y', 'z.2026-11-27', '7d', '_id', 'a.$', '$x'];

function value(r: SeededRandom, depth = 0): unknown {
  const kind = r.next();
  if (kind < 0.25) return Math.floor(r.next() * 5);
  if (kind < 0.4) return r.pick(['x', 'y', '']);
  if (kind < 0.48) return null;
  if (kind < 0.55) return new Date(Date.UTC(2026, 0, 1 + Math.floor(r.next() * 3)));
  if (kind < 0.62) return r.pick([true, false]);
  if (kind < 0.75 && depth < 2) return [value(r, depth + 1), value(r, depth + 1)].slice(0, Math.floor(r.next() * 3));
  if (depth < 2) {
    const doc: Record<string, unknown> = {};
    for (const key of ['b', 'c', 'x']) if (r.next() < 0.5) doc[key] = value(r, depth + 1);
    return doc;
  }
  return 1.5;
}

/** A few values, often repeated, so that `$pull` conditions find what they name. */
function scalar(r: SeededRandom): unknown {
  return r.pick([0, 1, 2, 'x', 'y', true, new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(2026, 0, 2))]);
}

/** A document `$pull` takes (scalars), or now and then one it leaves to mingo (null, an array, an operator, a NaN). */
function pullCondition(r: SeededRandom): Record<string, unknown> {
  const condition: Record<string, unknown> = {};
  for (const key of ['b', 'c']) if (r.next() < 0.6) condition[key] = scalar(r);
  const odd = r.next();
  if (odd < 0.05) condition.x = null;
  else if (odd < 0.1) condition.x = [1];
  else if (odd < 0.15) condition.x = { $in: [1, 2] };
  else if (odd < 0.18) condition.x = Number.NaN;
  return condition;
}

function documentOf(r: SeededRandom): Record<string, unknown> {
  const doc: Record<string, unknown> = { _id: 'd' };
  for (const field of FIELDS) if (r.next() < 0.7) doc[field] = value(r);
  // Lists of small documents like the ledger's outbox, where `$pull` finds matches.
  if (r.next() < 0.5) {
    doc.list = Array.from({ length: Math.floor(r.next() * 4) }, () => {
      const element: Record<string, unknown> = {};
      for (const key of ['b', 'c', 'x']) if (r.next() < 0.6) element[key] = r.next() < 0.9 ? scalar(r) : value(r, 1);
      return r.next() < 0.9 ? element : scalar(r);
    });
  }
  return doc;
}

function updateOf(r: SeededRandom): Record<string, Record<string, unknown>> {
  const update: Record<string, Record<string, unknown>> = {};
  for (let n = 1 + Math.floor(r.next() * 3); n > 0; n--) {
    const operator = r.pick(['$set', '$set', '$inc', '$unset', '$push', '$pull', '$pull']);
    const path = operator === '$pull' && r.next() < 0.7 ? 'list' : r.pick(PATHS);
    (update[operator] ??= {})[path] =
      operator === '$inc' ? r.pick([0, 1, -2, 2.5, 'x']) : operator === '$unset' ? '' : operator === '$pull' ? pullCondition(r) : value(r);
  }
  return update;
}

describe('plain updates', () => {
  it('agree with mingo on 5,000 random documents and updates, and leave it the cases they do not take', () => {
    const r = seededRandom(41);
    let answered = 0;
    let pulled = 0;
    for (let run = 0; run < 5000; run++) {
      const doc = documentOf(r);
      const update = updateOf(r);
      const ours = cloneValue(doc);
      const changed = plainUpdate(ours, update);
      if (changed === undefined) {
        // Untouched when left to mingo.
        expect(encode(ours)).toBe(encode(doc));
        continue;
      }
      answered++;
      if ('$pull' in update && changed) pulled++;
      const theirs = cloneValue(doc);
      const modified = mingoUpdate(theirs, update as never, undefined, undefined, { cloneMode: 'deep' });
      const context = `${encode(doc)} ${encode(update)}`;
      expect(encode(ours), context).toBe(encode(theirs));
      expect(changed, context).toBe(modified.length > 0);
    }
    // Enough of them are plain (1,042 of this seed's 5,000, 144 of them pulling something) that the comparison is not vacuous.
    expect(answered).toBeGreaterThan(600);
    expect(pulled).toBeGreaterThan(100);
  });

  it('copies what it sets, so the caller’s value stays its own', () => {
    const doc: Record<string, unknown> = { _id: 'd' };
    const nested = { list: [1, 2] };
    expect(plainUpdate(doc, { $set: { 'a.b': nested } })).toBe(true);
    nested.list.push(3);
    expect(doc).toEqual({ _id: 'd', a: { b: { list: [1, 2] } } });
  });
});
