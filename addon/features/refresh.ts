/**
 * "Refresh selected": the formulas of the selected cells evaluated by the add-on itself, in an
 * execution that may spend, so each buys what it lacks; Sheets then recalculates them and they
 * answer from what was just paid for. A formula's arguments are read as Sheets would pass them:
 * text and numbers as written, cell references and ranges as their values.
 */
import { FormulaError } from './formulas.ts';

export const FORMULA_CALL = /^=\s*(PROSPECTA_(?:CNPJ|ENRICH|AI))\s*\(([\s\S]*)\)\s*$/i;

/** The function's name and its arguments' source text, split at top-level commas (or semicolons, as some locales write them). */
export function parseCall(formula: string): { name: string; args: string[] } | null {
  const call = FORMULA_CALL.exec(formula.trim());
  if (!call) return null;
  const args: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  for (const ch of call[2]!) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '(') depth++;
    else if (!quoted && ch === ')') depth--;
    if (!quoted && depth === 0 && (ch === ',' || ch === ';')) {
      args.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim() || args.length) args.push(current.trim());
  return { name: call[1]!.toUpperCase(), args };
}

const REFERENCE = /^(?:(?:'((?:[^']|'')+)'|([\w.]+))!)?(\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?)$/i;

/** An argument's value: text, a number, or the values of the cells it names (`read(sheet, a1)`, sheet null for the formula's own). */
export function argumentValue(source: string, read: (sheet: string | null, a1: string) => unknown[][]): unknown {
  if (source === '') return '';
  const text = /^"((?:[^"]|"")*)"$/.exec(source);
  if (text) return text[1]!.replace(/""/g, '"');
  if (/^-?\d+(?:[.,]\d+)?$/.test(source)) return Number(source.replace(',', '.'));
  const ref = REFERENCE.exec(source);
  if (!ref) throw new FormulaError(`Can't refresh ${source}: give the inputs as cells or text.`);
  const values = read(ref[1]?.replace(/''/g, "'") ?? ref[2] ?? null, ref[3]!.replace(/\$/g, ''));
  return values.length === 1 && values[0]!.length === 1 ? values[0]![0] : values;
}
