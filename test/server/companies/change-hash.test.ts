/**
 * The compared-fields hash an import keeps per establishment: releases compare unchanged
 * establishments by it, so it must differ whenever a compared field does, and only then.
 */
import { describe, expect, it } from 'vitest';
import { changeHash } from '../../../server/companies/changes/change-diff.ts';

const record = {
  cnpj: '11222333000181',
  name: 'PADARIA BOM PAO LTDA',
  tradeName: null,
  registrationStatus: 'ATIVA',
  capital: 10000,
  simples: { option: true, since: '2020-01-01', until: null },
  address: { street: 'RUA A', number: '10', city: 'SAO PAULO', state: 'SP' },
  phones: [{ areaCode: '11', number: '55551234' }],
  partners: [{ name: 'MARIA SOUZA', document: '***123456**', qualification: 'Sócio-Administrador' }],
  release: '2026-10',
};

describe('changeHash', () => {
  it('is an integer JavaScript and SQLite both hold exactly, the same for the same fields', () => {
    const hash = changeHash(record);
    expect(Number.isSafeInteger(hash) && hash >= 0).toBe(true);
    expect(changeHash(structuredClone(record))).toBe(hash);
  });

  it('takes a missing field for a null one, and ignores what is not compared (the release)', () => {
    const { tradeName: _, ...withoutTradeName } = record;
    expect(changeHash(withoutTradeName)).toBe(changeHash(record));
    expect(changeHash({ ...record, release: '2026-11' })).toBe(changeHash(record));
  });

  it('differs when any compared value does, however deep, and by type', () => {
    const variants = [
      { ...record, name: 'PADARIA BOM PAO LTDB' },
      { ...record, tradeName: '' },
      { ...record, tradeName: 'null' },
      { ...record, capital: 10001 },
      { ...record, capital: '10000' },
      { ...record, simples: { ...record.simples, option: false } },
      { ...record, simples: null },
      { ...record, address: { ...record.address, number: '11' } },
      { ...record, address: { ...record.address, complement: 'SALA 1' } },
      { ...record, phones: [] },
      { ...record, phones: [...record.phones, ...record.phones] },
      { ...record, partners: [{ ...record.partners[0]!, qualification: 'Sócio' }] },
      // Where one text ends and the next begins is part of it.
      { ...record, address: { ...record.address, street: 'RUA A1', number: '0' } },
    ];
    const hashes = new Set([changeHash(record), ...variants.map(changeHash)]);
    expect(hashes.size).toBe(variants.length + 1);
  });
});
