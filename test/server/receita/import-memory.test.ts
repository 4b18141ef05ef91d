/**
 * The import's memory does not grow with what one company holds times its establishments: a
 * company with many partners and many establishments in one batch, imported by the real CLI in a
 * heap far smaller than those documents together, builds and stores them one at a time.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { makeCnpj } from '../../helpers/companies.ts';
import { runCli } from '../../helpers/processes.ts';
import { estabelecimento, writeExtracted } from '../../helpers/release-files.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

/**
 * About 4 MB of heap a document (each carries every partner): 25 of them do not fit the heap
 * together, one does. Slow for its size (about 20 s on a busy machine): building a document
 * costs about 10 µs a partner.
 */
const PARTNERS = 10_000;
const ESTABLISHMENTS = 25;
const HEAP_MIB = 96;

it('builds one company\'s documents one at a time, however many partners and establishments it has', { timeout: 60_000 }, async () => {
  const work = await tempDir('import-memory');
  const release = path.join(work, '2026-10');
  await mkdir(release);
  const root = '11222333';
  await writeExtracted(release, {
    'F.K03200$Z.D61011.CNAECSV': [['6201501', 'Desenvolvimento de programas de computador sob encomenda']],
    'K3241.K03200Y0.D61011.EMPRECSV': [[root, 'COOPERATIVA GRANDE LTDA', '2062', '49', '1000,00', '05', '']],
    'K3241.K03200Y0.D61011.ESTABELE': Array.from({ length: ESTABLISHMENTS }, (_, i) => estabelecimento(makeCnpj(root, String(i + 1).padStart(4, '0')))),
    'K3241.K03200Y0.D61011.SOCIOCSV': Array.from({ length: PARTNERS }, (_, i) => [
      root, '2', `SOCIO NUMERO ${i} DA SILVA`, `***${String(i).padStart(6, '0')}**`, '49', '20150302', '', '***000000**', '', '00', '5',
    ]),
    'F.K03200$W.SIMPLES.CSV.D61011': [[root, 'N', '', '', 'N', '', '']],
  });
  const result = await runCli(['import', 'cnpj', '--dir', release], {
    DATA_DIR: path.join(work, 'data'),
    NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}`,
  });
  expect(result.code, result.stderr.slice(-2000)).toBe(0);
  expect(result.json).toMatchObject({ complete: true, establishments: ESTABLISHMENTS, partners: PARTNERS });
});
