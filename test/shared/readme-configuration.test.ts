/**
 * The README's configuration table lists every environment variable the server reads: the names
 * server/config.ts reads (its one home for them), and the per-provider variables
 * providers/settings.ts builds from a provider's prefix (`${prefix}_COST` → `<PROVIDER>_COST`).
 * A variable added there without a row here fails this test.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const config = read('server/config.ts');
const providerSettings = read('server/providers/settings.ts');
const readme = read('README.md');
const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
/** The names the table's first column holds, each in backquotes. */
const listed = new Set([...table.matchAll(/^\| (.+?) \|/gm)].flatMap(([, cell]) => [...cell!.matchAll(/`([^`]+)`/g)].map(([, name]) => name!)));

describe("the README's configuration table", () => {
  it('lists every variable server/config.ts reads', () => {
    const read = [...new Set([...config.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|PORT|HOST)'/g)].map(([, name]) => name!))];
    expect(read.length).toBeGreaterThan(40);
    expect(read.filter((name) => !listed.has(name))).toEqual([]);
  });

  it('lists the variables each provider gets from its prefix', () => {
    const suffixes = [...new Set([...providerSettings.matchAll(/`\$\{prefix\}(_[A-Z_]+)`/g)].map(([, suffix]) => suffix!))];
    expect(suffixes).toEqual(expect.arrayContaining(['_URL', '_COST', '_RATE_PER_SECOND']));
    const described = [...listed].join(' ');
    expect(suffixes.filter((suffix) => !described.includes(suffix))).toEqual([]);
  });
});
