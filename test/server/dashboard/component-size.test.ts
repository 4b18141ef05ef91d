/**
 * The dashboard's components and hooks stay small (issue 45): every function of the front end
 * that renders (its name starts with a capital, or JSX stands in its own body) or is a hook
 * (`useX`) is under MAX_LINES lines, so a page is put together from parts that each hold one thing.
 * Read with the TypeScript parser, not run: nothing of the browser is needed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const WEB = new URL('../../../server/dashboard/web/', import.meta.url).pathname;
const MAX_LINES = 80;

interface Measured {
  where: string;
  name: string;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const isJsx = (node: ts.Node) => ts.isJsxElement(node) || ts.isJsxSelfClosingElement(node) || ts.isJsxFragment(node);

/** JSX in the function's own body, not in a function nested inside it (that one is measured on its own). */
function rendersItself(fn: ts.SignatureDeclaration): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found || ts.isFunctionLike(node)) return;
    if (isJsx(node)) found = true;
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(fn, visit);
  return found;
}

/** The name a function goes by: its own, or the variable or property it is assigned to. */
function nameOf(fn: ts.SignatureDeclaration): string | undefined {
  if (fn.name && ts.isIdentifier(fn.name)) return fn.name.text;
  const parent = fn.parent;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return undefined;
}

function measure(path: string): Measured[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true, path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: Measured[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const name = nameOf(node);
      const component = name !== undefined && /^[A-Z]/.test(name);
      const hook = name !== undefined && /^use[A-Z]/.test(name);
      if (component || hook || rendersItself(node)) {
        const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
        const start = line(node.getStart(source));
        found.push({ where: `${relative(WEB, path)}:${start + 1}`, name: name ?? '(a function returning JSX)', lines: line(node.getEnd()) - start + 1 });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('dashboard components', () => {
  const measured = sourceFiles(WEB).flatMap(measure);

  it('finds the components it measures', () => {
    // A parser that found nothing would pass everything: the app and its pages must be seen.
    expect(measured.map((m) => m.name)).toEqual(expect.arrayContaining(['App', 'Overview', 'Keys', 'Credits', 'Agent', 'useLoad']));
  });

  it(`are each under ${MAX_LINES} lines`, () => {
    const long = measured.filter((m) => m.lines >= MAX_LINES).map((m) => `${m.where} ${m.name}: ${m.lines} lines`);
    expect(long).toEqual([]);
  });
});
