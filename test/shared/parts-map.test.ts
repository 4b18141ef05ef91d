/**
 * The parts map (parts.mjs) is the architecture's one statement of its layers: the lint's zones
 * are generated from it, so what is checked here is that it covers the tree and that the
 * architecture doc shows it as it is.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { documented, mayImport, parts } from '../../parts.mjs';

const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/architecture.md', root), 'utf8');

describe('the parts map', () => {
  it('names a part for every folder and file at the top of server/, and each part exists', () => {
    const paths = new Set(parts.map((p) => p.path));
    const top = readdirSync(new URL('server/', root)).map((entry) => `server/${entry}`);
    expect(top.filter((entry) => !paths.has(entry))).toEqual([]);
    expect(parts.filter((p) => !existsSync(new URL(p.path, root))).map((p) => p.name)).toEqual([]);
  });

  it('is the table docs/architecture.md shows (npm run docs:parts writes it)', () => {
    expect(doc).toBe(documented(doc));
  });

  it('keeps the contract, the browser and the add-on apart from the server', () => {
    const part = (name: string) => parts.find((p) => p.name === name)!;
    expect(mayImport(part('shared'), part('lib'))).toBe(false);
    expect(mayImport(part('addon'), part('http'))).toBe(false);
    expect(mayImport(part('dashboard/web'), part('dashboard'))).toBe(false);
    expect(mayImport(part('companies'), part('pipeline'))).toBe(false);
    expect(mayImport(part('pipeline'), part('http'))).toBe(false);
    expect(mayImport(part('http'), part('pipeline'))).toBe(true);
  });
});
