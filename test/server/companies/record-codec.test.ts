/**
 * Issue 41: a release file's documents are encoded without member names, with the release's
 * repeated texts as numbers, and compressed against a dictionary; decoding writes exactly the
 * JSON text `JSON.stringify` writes of the document, whatever it holds.
 */
import { describe, expect, it } from 'vitest';
import { codecTables, RecordDecoder, RecordEncoder, withDictionary } from '../../../server/companies/registry/record-codec.ts';
import { companyDoc, makeCnpj, partner } from '../../helpers/companies.ts';

const record = (cnpj: string, overrides = {}) => {
  const { _id, search, importRun, ...rest } = companyDoc(cnpj, overrides);
  return rest;
};

describe('the record codec', () => {
  const lookups = { naturezas: new Map([['2062', 'Sociedade Empresária Limitada']]) };
  const samples = [record(makeCnpj('11222333')), record(makeCnpj('44555666'), { partners: [partner({ name: 'MARIA SOUZA' })] })];
  const tables = withDictionary(codecTables(lookups, '2026-10'), samples);
  const encoder = new RecordEncoder(tables);
  const decoder = new RecordDecoder(JSON.parse(JSON.stringify(tables)));

  it.each([
    ['a document of the release', record(makeCnpj('77888999'))],
    ['quotes, backslashes, braces and accents', record(makeCnpj('12ABC34501DE35'), { name: 'AÇÃO "ASPAS" \\ {[,]} LTDA' })],
    ['control characters, emoji and a lone surrogate', { name: 'a\u0001b\u001fc\nd', emoji: 'café ☕ 🍞', lone: 'x\ud800y' }],
    ['a shape the table lacks, nested, an empty object and array', { extra: { z: 1, a: [{}, [], [null, true, false]] }, n: -0.5e-7 }],
    ['members undefined are left out, as JSON.stringify does', { a: undefined, b: 1, c: [undefined], d: Number.NaN }],
    ['a document longer than the decoder\'s first buffer', { long: 'Ç"\\'.repeat(12_000), list: Array.from({ length: 2000 }, (_, i) => ({ code: String(i), description: 'ATIVA' })) }],
  ])('%s: decodes to JSON.stringify\'s text, as a string and as bytes', (_name, value) => {
    const stored = encoder.encode(value);
    expect(decoder.decode(stored)).toBe(JSON.stringify(value));
    expect(decoder.bytes(stored).equals(Buffer.from(JSON.stringify(value)))).toBe(true);
  });

  it('compresses a document of the release to well under its JSON', () => {
    const value = record(makeCnpj('77888999'), { partners: [partner({ name: 'ANA PAULA' })] });
    expect(encoder.encode(value).length).toBeLessThan(Buffer.byteLength(JSON.stringify(value)) / 3);
  });

  it('encodes a document to the same bytes whatever it encoded before, a document larger than its window included', () => {
    // The compressor reuses its tables and buffers from one document to the next (issue 41's speed):
    // nothing of an earlier document may leak into a later one's bytes.
    const value = record(makeCnpj('77888999'), { partners: [partner({ name: 'ANA PAULA' })] });
    const large = record(makeCnpj('12345678'), { partners: Array.from({ length: 600 }, (_, i) => partner({ name: `SÓCIA ${i} ÇÃ` })) });
    const first = Buffer.from(new RecordEncoder(tables).encode(value));
    const used = new RecordEncoder(tables);
    for (let i = 0; i < 50; i++) used.encode(record(makeCnpj(String(10_000_000 + i * 7919)), { name: `EMPRESA ${i}` }));
    expect(decoder.decode(used.encode(large))).toBe(JSON.stringify(large));
    expect(Buffer.from(used.encode(value))).toEqual(first);
    expect(Buffer.from(new RecordEncoder(tables).encode(large))).toEqual(Buffer.from(used.encode(large)));
  });

  it('refuses bytes that are not a document it wrote', () => {
    const stored = encoder.encode(record(makeCnpj('77888999')));
    const damaged = Uint8Array.from(stored);
    damaged[damaged.length - 1] = 0xff - damaged[damaged.length - 1]!;
    damaged[1] = 0xff;
    damaged[2] = 0xff;
    expect(() => decoder.decode(damaged)).toThrow();
  });
});
