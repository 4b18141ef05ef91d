import { readFile } from 'node:fs/promises';
import { expect, it } from 'vitest';
import { API_DOC, withTable } from '../../scripts/operations-table.ts';

it('docs/api.md lists every operation of the registry as it is (npm run docs:operations rewrites it)', async () => {
  const text = await readFile(API_DOC, 'utf8');
  expect(withTable(text), 'the operations table in docs/api.md is stale: run npm run docs:operations').toBe(text);
});
