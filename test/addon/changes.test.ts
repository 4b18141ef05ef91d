/** The Changes tab's line per row: each kind of change in a few words, the release it happened in. */
import { describe, expect, it } from 'vitest';
import { describeChange } from '../../addon/features/changes.ts';
import type { OutputOf } from '../../shared/operations/index.ts';

type Change = OutputOf<'searchCompanyChanges'>['changes'][number];

const company = { cnpj: '11222333000181', name: 'PADARIA BOA LTDA', tradeName: null, registrationStatus: 'BAIXADA' as const, city: 'SAO PAULO', state: 'SP' };
const change = (kind: Change['kind'], fields: Change['fields']): Change => ({ cnpj: company.cnpj, release: '2026-11', previousRelease: '2026-10', kind, fields, company });

describe('a change in words', () => {
  it("names the kind's main field from → to, and the release", () => {
    const status = change('status', {
      registrationStatus: { from: 'ATIVA', to: 'BAIXADA' },
      registrationStatusDate: { from: '2019-01-01', to: '2026-11-03' },
    });
    expect(describeChange(status)).toBe('status: ATIVA → BAIXADA (2026-11)');
    // Another field of the kind, when the main one did not change, is named.
    expect(describeChange(change('name', { tradeName: { from: null, to: 'BOA' } }))).toBe('name (tradeName): – → BOA (2026-11)');
  });

  it('says records in a few words: activities by code and description, addresses by their parts, lists joined', () => {
    const activity = change('activity', { mainActivity: { from: { code: '1091102', description: 'Padaria' }, to: { code: '5611201', description: 'Restaurantes' } } });
    expect(describeChange(activity)).toBe('activity: 1091102 Padaria → 5611201 Restaurantes (2026-11)');
    const address = change('address', { address: { from: { street: 'RUA A', number: '1', city: 'SAO PAULO', state: 'SP' }, to: { street: 'RUA B', number: '2', city: 'SAO PAULO', state: 'SP' } } });
    expect(describeChange(address)).toBe('address: RUA A, 1, SAO PAULO, SP → RUA B, 2, SAO PAULO, SP (2026-11)');
    expect(describeChange(change('contact', { phones: { from: ['1133334444'], to: [] } }))).toBe('contact: 1133334444 → – (2026-11)');
  });

  it('partners who joined and left, and establishments opened or removed', () => {
    const partner = (name: string) => ({ name, document: null, qualification: null, since: null, type: null, qualificationCode: null, country: null, ageBand: null, legalRepresentative: null });
    expect(describeChange(change('partners', { partners: { added: [partner('ANA')], removed: [partner('JOÃO')] } }))).toBe('partners: +ANA, −JOÃO (2026-11)');
    expect(describeChange(change('opened', {}))).toBe('opened (2026-11)');
    expect(describeChange(change('removed', {}))).toBe('removed (2026-11)');
  });
});
