/**
 * Issue 41: the registry's compressor (a window that starts with a dictionary) on documents longer
 * than an offset reaches (64 KiB): each decompresses to its bytes, whatever was compressed before.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DictionaryLz } from '../../../server/companies/registry/dictionary-lz.ts';

describe('the dictionary compressor', () => {
  const dictionary = randomBytes(40_000);
  const roundTrip = (input: Uint8Array) => {
    const stored = new DictionaryLz(dictionary).compress(input);
    const { bytes, start, end } = new DictionaryLz(dictionary).decompress(stored);
    return Buffer.from(bytes.subarray(start, end));
  };

  it('keeps a repeat further back than 64 KiB exact (no offset wraps)', () => {
    const part = randomBytes(2_000);
    const input = Buffer.concat([part, Buffer.alloc(70_000, 'x'), part]);
    expect(roundTrip(input).equals(input)).toBe(true);
  });

  it('decompresses a document that outgrows the window it started with', () => {
    const input = Buffer.concat(Array.from({ length: 40 }, () => Buffer.concat([randomBytes(3_000), dictionary.subarray(1_000, 2_000)])));
    expect(roundTrip(input).equals(input)).toBe(true);
  });

  it('compresses a document to the same bytes after others, through compress and compressText alike', () => {
    const text = `${'SÓCIA ÇÃO '.repeat(50)}${dictionary.subarray(0, 500).toString('hex')}`;
    const fresh = Buffer.from(new DictionaryLz(dictionary).compress(Buffer.from(text)));
    const used = new DictionaryLz(dictionary);
    for (let i = 0; i < 20; i++) used.compress(randomBytes(1_000 + i * 100));
    expect(Buffer.from(used.compressText(text))).toEqual(fresh);
  });
});
