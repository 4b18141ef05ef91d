/** An establishment batch packed for a document thread comes back as it was. */
import { describe, expect, it } from 'vitest';
import { packBatch, unpackBatch } from '../../../server/receita/import/packed-batch.ts';
import type { EstablishmentBatch } from '../../../server/receita/import/documents.ts';

describe('a packed establishment batch', () => {
  it('unpacks to the same rows, staged parts (absent or empty) and tax regimes', () => {
    const batch: EstablishmentBatch = {
      rows: [
        { cnpj: '11222333000181', fields: ['11222333', '0001', '81', '', 'ÇA VA "X"', '\u0001', ''] },
        { cnpj: '12ABC34501DE35', fields: ['', '', ''] },
      ],
      roots: new Map([
        ['11222333', { company: 'ACME\u0001\u0001', simples: '', partners: ['A\u0001B', ''] }],
        ['12ABC345', { simples: 'S\u0001' }],
        ['44555666', {}],
      ]),
      taxRegimes: new Map([['11222333000181', ['lucro_real']]]),
    };
    expect(unpackBatch(structuredClone(packBatch(batch)))).toEqual(batch);
    expect(unpackBatch(packBatch({ rows: [], roots: new Map() }))).toEqual({ rows: [], roots: new Map() });
  });
});
