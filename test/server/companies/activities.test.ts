import { describe, expect, it } from 'vitest';
import { ActivityMatcher } from '../../../server/companies/activities.ts';
import { CNAE_SUBCLASSES } from '../../../server/seed/code-tables.ts';

const matcher = new ActivityMatcher(CNAE_SUBCLASSES);
const codes = (phrase: string) => matcher.match(phrase).map((a) => a.code);

describe('activity matcher over the CNAE 2.3 table', () => {
  it.each([
    ['padaria', '4721102'],
    ['Padarias', '4721102'],
    ['PADARIA', '4721102'],
    ['software house', '6201501'],
    ['dentist', '8630504'],
    ['dentistas', '8630504'],
    ['odontológica', '8630504'],
    ['advocacia', '6911701'],
    ['academia', '9313100'],
    ['restaurant', '5611201'],
    ['contabilidade', '6920601'],
  ])('"%s" names %s', (phrase, code) => {
    expect(codes(phrase)).toContain(code);
  });

  it('names nothing for words no description has', () => {
    expect(codes('blockchain quantum')).toEqual([]);
    expect(codes('de')).toEqual([]);
  });

  it('expands division, group and class prefixes', () => {
    expect(matcher.byPrefix('62').every((a) => a.code.startsWith('62'))).toBe(true);
    expect(matcher.byPrefix('62015').map((a) => a.code)).toEqual(['6201501', '6201502']);
    expect(matcher.get('4721102')?.description).toMatch(/^Padaria/);
  });
});
