import { describe, expect, it } from 'vitest';
import { checkCnpj, cnpjCheckDigits, normalizeCnpj } from '../../shared/cnpj.ts';

describe('CNPJ identifiers', () => {
  it('computes the check digits of numeric CNPJs', () => {
    expect(cnpjCheckDigits('112223330001')).toBe('81');
    expect(checkCnpj('11.222.333/0001-81')).toEqual({ status: 'valid', cnpj: '11222333000181' });
  });

  it('computes the check digits of the official alphanumeric example, ASCII − 48 per character', () => {
    expect(cnpjCheckDigits('12ABC34501DE')).toBe('35');
    expect(checkCnpj('12.ABC.345/01DE-35')).toEqual({ status: 'valid', cnpj: '12ABC34501DE35' });
    // The wrong A = 10 mapping would give 45.
    expect(checkCnpj('12ABC34501DE45').status).toBe('invalid');
  });

  it.each(['00000000E08G12', '93ZB0VRYV6KA67', 'A87HBZHB000161', 'Q0SLFMBD7VX439', 'A1B2C3D4E5F668', 'ABCDEFGH000195'])(
    'accepts the published alphanumeric identifier %s',
    (cnpj) => expect(checkCnpj(cnpj)).toEqual({ status: 'valid', cnpj }),
  );

  it('accepts lowercase and punctuation, and returns the 14-character form', () => {
    expect(normalizeCnpj(' 12.abc.345/01de-35 ')).toBe('12ABC34501DE35');
    expect(checkCnpj('12abc34501de35').status).toBe('valid');
  });

  it('a well-formed identifier with wrong check digits, or repeated digits, is invalid', () => {
    expect(checkCnpj('11222333000182')).toEqual({ status: 'invalid', cnpj: '11222333000182' });
    expect(checkCnpj('00000000000000')).toEqual({ status: 'invalid', cnpj: '00000000000000' });
    expect(checkCnpj('11111111111111').status).toBe('invalid');
  });

  it.each(['', '1122233300018', '112223330001811', '112223330001A1', '11_222_333_0001_81', 'abc', '12ABC34501DE3X'])(
    '%j is malformed',
    (input) => expect(checkCnpj(input)).toEqual({ status: 'malformed' }),
  );
});
