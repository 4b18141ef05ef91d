import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

// Each import starts two of these threads, and what they load comes before their first document:
// the query engine and the schema library were about 0.3 s of every import (issue 35).
describe('the import\'s document worker', () => {
  it('loads neither mingo nor TypeBox', async () => {
    const result = await build({
      absWorkingDir: root,
      entryPoints: ['server/receita/import/document-worker.ts'],
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const packages = Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path));
    expect(packages).not.toContain('mingo');
    expect(packages).not.toContain('@sinclair/typebox');
    expect(packages).toContain('yauzl');
  });
});
