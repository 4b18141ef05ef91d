/**
 * Cutting top-level members out of a stored document's JSON without parsing it (json-members.ts),
 * which `jsonByIds` does for every document of a CNPJ batch: the cut must be exactly what
 * writing the parsed document without them gives, and bytes the scan cannot vouch for (a tag,
 * something that is not an object) are left to the caller to parse.
 */
import { describe, expect, it } from 'vitest';
import { memberPrefixes, withoutMembers } from '../../../server/store/embedded/json-members.ts';

const cut = (doc: unknown, omit: string[]) => {
  const bytes = Buffer.from(`xx${JSON.stringify(doc)}yy`);
  return withoutMembers(bytes, 2, bytes.length - 2, memberPrefixes(omit))?.toString('utf8');
};

const without = (doc: Record<string, unknown>, omit: string[]) => JSON.stringify(Object.fromEntries(Object.entries(doc).filter(([key]) => !omit.includes(key))));

describe('withoutMembers', () => {
  const tricky: Record<string, unknown> = {
    _id: 'a"b\\',
    text: 'x","search":"y',
    quote: '\\"',
    braces: '{[,]}',
    nested: { search: 1, list: [{ search: [] }, '"', '\\'], empty: {} },
    search: { words: ['a,b', '}'] },
    unicode: 'ação 😀 \u0000',
    numbers: [-1.5e-7, 0, 12],
    flags: [true, false, null],
    last: 'search',
  };

  it('gives the document as written without the omitted members, wherever they are, whatever their strings hold', () => {
    for (const omit of [['_id'], ['search'], ['last'], ['_id', 'search', 'last'], ['text', 'nested'], [], ['absent'], Object.keys(tricky)]) {
      expect(cut(tricky, omit), omit.join()).toBe(without(tricky, omit));
    }
    expect(cut({}, ['a'])).toBe('{}');
    expect(cut({ a: 1 }, ['a'])).toBe('{}');
  });

  it('leaves to the caller what may hold a tag, and what is not an object', () => {
    expect(cut({ at: { $date: 1 } }, [])).toBeUndefined();
    expect(cut({ n: { $number: 'NaN' } }, ['x'])).toBeUndefined();
    expect(cut([1, 2], [])).toBeUndefined();
    expect(cut('text', [])).toBeUndefined();
    const bytes = Buffer.from('{"a":"unterminated}');
    expect(withoutMembers(bytes, 0, bytes.length, memberPrefixes(['a']))).toBeUndefined();
  });
});
