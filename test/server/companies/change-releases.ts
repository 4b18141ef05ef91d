/**
 * A pair of small releases written by hand, the second holding one establishment per kind of
 * change (decisions.md, "Registry changes"), for the change tests on either store.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { makeCnpj } from '../../helpers/companies.ts';
import { estabelecimento, writeExtracted } from '../../helpers/release-files.ts';

export const cnpj = {
  /** ATIVA, then BAIXADA: `status`. */
  closed: makeCnpj('11111111'),
  /** The company renamed, its capital, size and legal nature changed: on both its establishments. */
  renamed: makeCnpj('22222222'),
  renamedBranch: makeCnpj('22222222', '0002'),
  /** Moved (address), new phone and email (contact), another main activity. */
  moved: makeCnpj('33333333'),
  /** A partner left, another joined; left the Simples. */
  partners: makeCnpj('44444444'),
  /** In the first release only. */
  removed: makeCnpj('55555555'),
  /** In the second release only, in RJ. */
  opened: makeCnpj('66666666'),
  /** The same in both. */
  same: makeCnpj('77777777'),
};

const lookups = {
  'F.K03200$Z.D61011.CNAECSV': [
    ['6201501', 'Desenvolvimento de programas de computador sob encomenda'],
    ['5611201', 'Restaurantes e similares'],
  ],
  'F.K03200$Z.D61011.NATJUCSV': [['2062', 'Sociedade Empresária Limitada'], ['2305', 'Empresa Individual de Responsabilidade Limitada']],
  'F.K03200$Z.D61011.MUNICCSV': [['7107', 'SAO PAULO'], ['6001', 'RIO DE JANEIRO']],
  'F.K03200$Z.D61011.QUALSCSV': [['49', 'Sócio-Administrador']],
  'F.K03200$Z.D61011.MOTICSV': [['00', 'SEM MOTIVO'], ['01', 'EXTINCAO POR ENCERRAMENTO']],
  'F.K03200$Z.D61011.PAISCSV': [['105', 'BRASIL']],
};

const partner = (root: string, name: string, doc: string) => [root, '2', name, doc, '49', '20150302', '', '***000000**', '', '00', '5'];

/** Writes the two releases' folders under `root`; their paths. */
export async function writeReleasePair(root: string): Promise<{ first: string; second: string }> {
  const first = path.join(root, '2026-10');
  const second = path.join(root, '2026-11');
  await Promise.all([mkdir(first), mkdir(second)]);
  const roots = ['11111111', '33333333', '44444444', '55555555', '66666666', '77777777'];
  const company = (r: string) => [r, `EMPRESA ${r} LTDA`, '2062', '49', '1000,00', '01', ''];
  await writeExtracted(first, {
    ...lookups,
    'K3241.K03200Y0.D61011.EMPRECSV': [...roots.map(company), ['22222222', 'VELHO NOME LTDA', '2062', '49', '1000,00', '01', '']],
    'K3241.K03200Y0.D61011.ESTABELE': [
      estabelecimento(cnpj.closed),
      estabelecimento(cnpj.renamed),
      estabelecimento(cnpj.renamedBranch),
      estabelecimento(cnpj.moved, { 14: 'RUA VELHA', 18: '01001000' }),
      estabelecimento(cnpj.partners),
      estabelecimento(cnpj.removed),
      estabelecimento(cnpj.same),
    ],
    'K3241.K03200Y0.D61011.SOCIOCSV': [partner('44444444', 'ANA VELHA', '***111111**'), partner('44444444', 'BRUNO FICA', '***222222**')],
    'F.K03200$W.SIMPLES.CSV.D61011': [['44444444', 'S', '20200101', '', 'N', '', '']],
  });
  await writeExtracted(second, {
    ...lookups,
    'K3241.K03200Y0.D61011.EMPRECSV': [...roots.map(company), ['22222222', 'NOVO NOME LTDA', '2305', '49', '5000,00', '03', '']],
    'K3241.K03200Y0.D61011.ESTABELE': [
      estabelecimento(cnpj.closed, { 5: '08', 6: '20261015', 7: '01' }),
      estabelecimento(cnpj.renamed),
      estabelecimento(cnpj.renamedBranch),
      estabelecimento(cnpj.moved, { 14: 'AVENIDA NOVA', 18: '02002000', 21: '11', 22: '33334444', 27: 'novo@example.com', 11: '5611201' }),
      estabelecimento(cnpj.partners),
      estabelecimento(cnpj.opened, { 19: 'RJ', 20: '6001', 11: '5611201', 10: '20261020' }),
      estabelecimento(cnpj.same),
    ],
    'K3241.K03200Y0.D61011.SOCIOCSV': [partner('44444444', 'BRUNO FICA', '***222222**'), partner('44444444', 'CARLA CHEGA', '***333333**')],
    'F.K03200$W.SIMPLES.CSV.D61011': [['44444444', 'N', '20200101', '20261001', 'N', '', '']],
  });
  return { first, second };
}

/** The kinds the second release records, per CNPJ, as the feed must give them. */
export const expectedKinds: Record<string, string[]> = {
  [cnpj.closed]: ['status'],
  [cnpj.renamed]: ['capital', 'legalNature', 'name', 'size'],
  [cnpj.renamedBranch]: ['capital', 'legalNature', 'name', 'size'],
  [cnpj.moved]: ['activity', 'address', 'contact'],
  [cnpj.partners]: ['partners', 'simples'],
  [cnpj.removed]: ['removed'],
  [cnpj.opened]: ['opened'],
};
