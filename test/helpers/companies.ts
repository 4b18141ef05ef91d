/** Company documents shaped as the Receita Federal importer writes them. */
import { cnpjCheckDigits } from '../../shared/cnpj.ts';
import { companyDocument, type CompanyDoc, type CompanyRecord, type Partner } from '../../server/companies/company-record.ts';

/** A partner with the fields a test names, the others unknown (null). */
export function partner(fields: Pick<Partner, 'name'> & Partial<Partner>): Partner {
  return {
    document: null,
    qualification: null,
    since: null,
    type: null,
    qualificationCode: null,
    country: null,
    ageBand: null,
    legalRepresentative: null,
    ...fields,
  };
}

/** A valid CNPJ from a root and an establishment order (`0001` is usually the head office). */
export function makeCnpj(root: string, order = '0001'): string {
  const first12 = root.padStart(8, '0') + order;
  return first12 + cnpjCheckDigits(first12);
}

export function companyDoc(
  cnpj: string,
  overrides: Partial<Omit<CompanyRecord, 'taxRegimes'>> & { release?: string; importRun?: string; taxRegimeKeys?: string[] } = {},
): CompanyDoc {
  const { release = '2026-10', importRun = 'test', taxRegimeKeys, ...record } = overrides;
  return companyDocument({
    cnpj,
    root: cnpj.slice(0, 8),
    name: `EMPRESA ${cnpj.slice(0, 8)} LTDA`,
    tradeName: null,
    establishment: cnpj.slice(8, 12) === '0001' ? 'MATRIZ' : 'FILIAL',
    registrationStatus: 'ATIVA',
    registrationStatusDate: '2015-03-02',
    registrationStatusReason: null,
    openingDate: '2015-03-02',
    mainActivity: { code: '6201501', description: 'Desenvolvimento de programas de computador sob encomenda' },
    secondaryActivities: [],
    legalNature: { code: '2062', description: 'Sociedade Empresária Limitada' },
    capital: 50000,
    fiscalSize: '01',
    simplesOption: true,
    meiOption: false,
    address: {
      street: 'RUA DAS FLORES',
      number: '100',
      complement: null,
      district: 'CENTRO',
      zipCode: '01001000',
      city: 'SAO PAULO',
      cityCode: '7107',
      state: 'SP',
      country: null,
    },
    phones: ['1133334444'],
    email: null,
    partners: [],
    size: { code: '01', description: 'MICRO EMPRESA' },
    responsibleQualification: null,
    federativeEntity: null,
    specialSituation: null,
    specialSituationDate: null,
    phone1: { areaCode: '11', number: '33334444' },
    phone2: null,
    fax: null,
    foreignCity: null,
    country: null,
    simples: { option: true, since: '2015-03-02', until: null },
    mei: { option: false, since: null, until: null },
    ...record,
  }, { release, importRun }, taxRegimeKeys);
}
