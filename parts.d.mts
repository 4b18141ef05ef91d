export interface Part {
  name: string;
  /** A folder, or one file. */
  path: string;
  layer?: string;
  imports?: string[];
  node?: false;
  holds: string;
}
export const layers: Array<{ name: string; peers?: true; about: string }>;
export const parts: Part[];
export const allow: Array<{ from: string; to: string; why: string }>;
export function mayImport(a: Part, b: Part): boolean;
export function zones(): Array<{ target: string[]; from: string | string[]; except?: string[]; message: string }>;
export const withoutNode: string[];
export function partsTable(): string;
export function documented(doc: string): string;
