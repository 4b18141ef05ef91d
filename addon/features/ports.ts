/** What the add-on's features need from Apps Script, as small ports (addon/gas/ implements them). */
export interface PropertiesPort {
  get(key: string): string | null;
  set(key: string, value: string): void;
  delete(key: string): void;
}

/** One tab of the spreadsheet. Rows and columns are 1-based, as in Apps Script. */
export interface SheetPort {
  name: string;
  /** The header row's labels. */
  headers(): string[];
  lastRow(): number;
  /** Cells of rows `first`…`first + count - 1`, every column, as text. */
  readRows(first: number, count: number): string[][];
  /** The column with this header, created at the end when missing. */
  ensureColumn(label: string): number;
  /** One column's cells from row `first` down. */
  writeColumn(first: number, column: number, values: string[]): void;
  setNote(row: number, column: number, note: string): void;
  hideColumn(column: number): void;
  /** Replaces the whole content with these rows (header first). */
  replaceAll(rows: string[][]): void;
}

export interface Clock {
  now(): number;
  sleep(ms: number): void;
}

export interface TriggerPort {
  /** Runs `handler` again in about a minute, in a new execution. */
  continueLater(handler: string): void;
  /** Removes the pending continuations of `handler`. */
  clear(handler: string): void;
}

/** The document lock: one execution works on the jobs at a time. */
export interface LockPort {
  tryLock(ms: number): boolean;
  release(): void;
}

/** CacheService's cache: values up to 100 KB, kept up to 6 hours (or dropped sooner). */
export interface CachePort {
  get(key: string): string | null;
  put(key: string, value: string, seconds: number): void;
}
