/**
 * Faithful fakes of the Apps Script services the add-on uses: SpreadsheetApp (typed 2-D values,
 * dimension checks on setValues, notes, active sheet and range, new sheets), PropertiesService,
 * CacheService, ScriptApp time-driven triggers, LockService, Utilities.sleep and UrlFetchApp,
 * whose fetch/fetchAll make real synchronous HTTP calls to a real server. They enforce Apps
 * Script's quotas: 6 minutes an execution and 30 seconds a custom function (of simulated time:
 * Utilities.sleep moves it, a fetch moves it by what it really took), 9 KB a property value,
 * 100 KB a cache value, 50 MB a fetch; a custom function may not write to the sheet or to the
 * user's properties. test/helpers/addon-sandbox.ts runs the add-on over them in a vm context.
 */
import { createHash } from 'node:crypto';
import { checkResponse } from './contract.ts';
import { syncHttp } from './sync-http.ts';

type Cell = string | number | boolean | Date | null;

/** What runs now: its quota, and whether Apps Script lets it write (a custom function may not). */
interface Execution {
  name: string;
  started: number;
  limitMs: number;
  customFunction: boolean;
}

/** Apps Script's quotas, and the simulated time they are measured in. */
export class Quotas {
  static readonly EXECUTION_MS = 6 * 60_000;
  static readonly CUSTOM_FUNCTION_MS = 30_000;
  static readonly PROPERTY_VALUE_BYTES = 9 * 1024;
  static readonly CACHE_VALUE_BYTES = 100 * 1024;
  static readonly CACHE_KEY_CHARS = 250;
  static readonly CACHE_MAX_SECONDS = 21_600;
  static readonly FETCH_BYTES = 50 * 1024 * 1024;

  private offset = 0;
  execution: Execution | null = null;

  /** Simulated time: the real clock, moved on by every Utilities.sleep (which does not wait). */
  now(): number {
    return Date.now() + this.offset;
  }

  advance(ms: number): void {
    this.offset += ms;
  }

  /** Runs `body` as one execution: a custom function (by its name) has 30 seconds, anything else 6 minutes. */
  execute<T>(name: string, body: () => T): T {
    if (this.execution) return body();
    const customFunction = /^PROSPECTA_/.test(name);
    this.execution = { name, started: this.now(), limitMs: customFunction ? Quotas.CUSTOM_FUNCTION_MS : Quotas.EXECUTION_MS, customFunction };
    try {
      const result = body();
      this.check();
      return result;
    } finally {
      this.execution = null;
    }
  }

  /** Throws as Apps Script stops an execution past its time. */
  check(): void {
    const run = this.execution;
    if (run && this.now() - run.started > run.limitMs) {
      throw new Error(run.customFunction ? 'Exceeded maximum execution time (line 0).' : 'Exceeded maximum execution time');
    }
  }

  /** A custom function may read but not write what it is refused here. */
  writing(what: string): void {
    this.check();
    if (this.execution?.customFunction) throw new Error(`Exception: You do not have permission to call ${what}`);
  }
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

const columnLetters = (column: number): string => (column > 26 ? columnLetters(Math.floor((column - 1) / 26)) : '') + String.fromCharCode(65 + ((column - 1) % 26));
const columnNumber = (letters: string) => [...letters.toUpperCase()].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);

class FakeRange {
  constructor(
    private readonly sheet: FakeSheet,
    private readonly row: number,
    private readonly column: number,
    private readonly rows: number,
    private readonly columns: number,
  ) {
    if (row < 1 || column < 1 || rows < 1 || columns < 1) throw new Error('Exception: The starting row or column of the range is too small.');
  }

  getRow = () => this.row;
  getColumn = () => this.column;
  getCell = (row: number, column: number) => new FakeRange(this.sheet, this.row + row - 1, this.column + column - 1, 1, 1);
  getA1Notation = () => `${columnLetters(this.column)}${this.row}`;
  getFormulas = (): string[][] =>
    Array.from({ length: this.rows }, (_, r) => Array.from({ length: this.columns }, (_, c) => this.sheet.formulas.get(`${this.row + r}:${this.column + c}`) ?? ''));
  setFormula(formula: string): FakeRange {
    this.sheet.quotas?.writing('setFormula');
    this.sheet.formulas.set(`${this.row}:${this.column}`, formula);
    this.sheet.recalculations++;
    return this;
  }
  getLastRow = () => this.row + this.rows - 1;
  getNumRows = () => this.rows;

  getValues(): Cell[][] {
    return Array.from({ length: this.rows }, (_, r) =>
      Array.from({ length: this.columns }, (_, c) => this.sheet.cell(this.row + r, this.column + c) ?? ''),
    );
  }

  setValues(values: Cell[][]): FakeRange {
    this.sheet.quotas?.writing('setValues');
    if (values.length !== this.rows || values.some((row) => row.length !== this.columns)) {
      throw new Error(
        `Exception: The number of rows in the data does not match the number of rows in the range. The data has ${values.length} but the range has ${this.rows}.`,
      );
    }
    values.forEach((row, r) => row.forEach((value, c) => this.sheet.put(this.row + r, this.column + c, value)));
    this.sheet.writes++;
    return this;
  }

  setValue(value: Cell): FakeRange {
    return this.setValues([[value]]);
  }

  getNote = () => this.sheet.notes.get(`${this.row}:${this.column}`) ?? '';
  setNote(note: string): FakeRange {
    this.sheet.quotas?.writing('setNote');
    this.sheet.notes.set(`${this.row}:${this.column}`, note);
    return this;
  }
}

export class FakeSheet {
  readonly grid: Cell[][] = [];
  readonly notes = new Map<string, string>();
  /** Formulas by "row:column"; the fake does not evaluate them (the test calls the custom function). */
  readonly formulas = new Map<string, string>();
  recalculations = 0;
  writes = 0;
  quotas: Quotas | undefined;

  constructor(private name: string, rows: Cell[][] = []) {
    rows.forEach((row, r) => row.forEach((v, c) => this.put(r + 1, c + 1, v)));
  }

  cell(row: number, column: number): Cell | undefined {
    return this.grid[row - 1]?.[column - 1];
  }

  put(row: number, column: number, value: Cell): void {
    while (this.grid.length < row) this.grid.push([]);
    this.grid[row - 1]![column - 1] = value;
  }

  /** The grid's size, which Sheets counts against the spreadsheet's 10 million cells: 1,000 × 26 at least, or what a test sets. */
  size: { rows: number; columns: number } | null = null;
  getMaxRows = () => Math.max(this.size?.rows ?? 1000, this.grid.length);
  getMaxColumns = () => Math.max(this.size?.columns ?? 26, this.getLastColumn());

  getName = () => this.name;
  getLastRow = () => {
    for (let r = this.grid.length; r > 0; r--) if (this.grid[r - 1]!.some((v) => v !== '' && v !== null && v !== undefined)) return r;
    return 0;
  };
  getLastColumn = () => Math.max(0, ...this.grid.map((row) => row.reduce<number>((last, v, i) => (v !== '' && v !== null && v !== undefined ? i + 1 : last), 0)));

  getRange(row: number | string, column = 1, rows = 1, columns = 1): FakeRange {
    if (typeof row === 'string') {
      const a1 = /^([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?$/i.exec(row.replace(/\$/g, ''));
      if (!a1) throw new Error(`Exception: Range not found: ${row}`);
      const [first, last] = [[columnNumber(a1[1]!), Number(a1[2])], [columnNumber(a1[3] ?? a1[1]!), Number(a1[4] ?? a1[2])]] as const;
      return new FakeRange(this, first[1], first[0], last[1] - first[1] + 1, last[0] - first[0] + 1);
    }
    return new FakeRange(this, row, column, rows, columns);
  }

  readonly hidden = new Set<number>();
  hideColumns(column: number, count = 1): void {
    for (let c = column; c < column + count; c++) this.hidden.add(c);
  }

  clearContents(): FakeSheet {
    this.grid.length = 0;
    return this;
  }

  /** The sheet as text, header included, for assertions. */
  table(): string[][] {
    const columns = this.getLastColumn();
    return Array.from({ length: this.getLastRow() }, (_, r) => Array.from({ length: columns }, (_, c) => String(this.cell(r + 1, c + 1) ?? '')));
  }

  column(label: string): string[] {
    const table = this.table();
    const index = table[0]!.indexOf(label);
    return index < 0 ? [] : table.slice(1).map((row) => row[index]!);
  }
}

class FakeProperties {
  readonly data = new Map<string, string>();
  constructor(
    private readonly quotas: Quotas,
    /** User properties: a custom function cannot set them. */
    private readonly user = false,
  ) {}
  getProperty = (key: string) => {
    this.quotas.check();
    return this.data.get(key) ?? null;
  };
  setProperty(key: string, value: string) {
    if (this.user) this.quotas.writing('setProperty');
    else this.quotas.check();
    if (bytes(String(value)) > Quotas.PROPERTY_VALUE_BYTES) throw new Error('Exception: Argument too large: value');
    this.data.set(key, String(value));
    return this;
  }
  deleteProperty(key: string) {
    if (this.user) this.quotas.writing('deleteProperty');
    this.data.delete(key);
    return this;
  }
}

/** CacheService's cache: values expire (600 s by default, 6 hours at most), 100 KB a value. */
export class FakeCache {
  readonly data = new Map<string, { value: string; expires: number }>();
  constructor(private readonly quotas: Quotas) {}
  get(key: string): string | null {
    this.quotas.check();
    const entry = this.data.get(key);
    return entry && entry.expires > this.quotas.now() ? entry.value : null;
  }
  getAll(keys: string[]): Record<string, string> {
    return Object.fromEntries(keys.flatMap((k) => (this.get(k) === null ? [] : [[k, this.get(k)!]])));
  }
  put(key: string, value: string, expirationInSeconds = 600): void {
    this.quotas.check();
    if (key.length > Quotas.CACHE_KEY_CHARS) throw new Error('Exception: Argument too large: key');
    if (bytes(String(value)) > Quotas.CACHE_VALUE_BYTES) throw new Error('Exception: Argument too large: value');
    const seconds = Math.min(expirationInSeconds, Quotas.CACHE_MAX_SECONDS);
    this.data.set(key, { value: String(value), expires: this.quotas.now() + seconds * 1000 });
  }
  putAll(values: Record<string, string>, expirationInSeconds = 600): void {
    for (const [k, v] of Object.entries(values)) this.put(k, v, expirationInSeconds);
  }
  remove(key: string): void {
    this.data.delete(key);
  }
}

interface FakeTrigger {
  handler: string;
  afterMs: number;
  getHandlerFunction(): string;
}

export interface FakeGas {
  spreadsheet: { sheets: FakeSheet[]; active: FakeSheet; selection: { row: number; rows: number; column?: number; columns?: number } | null };
  addSheet(name: string, rows: Cell[][]): FakeSheet;
  userProperties: FakeProperties;
  documentProperties: FakeProperties;
  userCache: FakeCache;
  documentCache: FakeCache;
  quotas: Quotas;
  /** The Apps Script globals, as a vm context is given them. */
  globals: Record<string, unknown>;
  triggers: FakeTrigger[];
  http: ReturnType<typeof syncHttp>;
  alerts: string[];
}

/**
 * A fresh set of fakes. They are not installed on Node's globalThis (where their silent console
 * would hide a script's own output): addon-sandbox.ts gives `globals` to the add-on's vm context.
 */
export function fakeGas(): FakeGas {
  const http = syncHttp();
  const quotas = new Quotas();
  const userProperties = new FakeProperties(quotas, true);
  const documentProperties = new FakeProperties(quotas);
  const userCache = new FakeCache(quotas);
  const documentCache = new FakeCache(quotas);
  const scriptCache = new FakeCache(quotas);
  const triggers: FakeTrigger[] = [];
  const alerts: string[] = [];
  const spreadsheet: FakeGas['spreadsheet'] = { sheets: [], active: undefined as unknown as FakeSheet, selection: null };
  let locked = false;

  const response = (r: { status: number; headers: Record<string, string>; body: string }) => ({
    getResponseCode: () => r.status,
    getContentText: () => r.body,
    getAllHeaders: () => r.headers,
  });
  type Params = { url?: string; method?: string; headers?: Record<string, string>; payload?: string; muteHttpExceptions?: boolean };
  /** A fetch takes the time it really took (simulated time runs with the real clock), then the quota is checked. */
  const timed = <T>(call: () => T): T => {
    quotas.check();
    const result = call();
    quotas.check();
    return result;
  };
  const toRequest = (url: string, p: Params) => ({ url, method: (p.method ?? 'get') as 'get', headers: p.headers ?? {}, ...(p.payload !== undefined ? { payload: p.payload } : {}) });
  const checked = (r: { status: number; headers: Record<string, string>; body: string }, p: Params & { url: string }) => {
    if (bytes(r.body) > Quotas.FETCH_BYTES) throw new Error('Exception: Response too large.');
    // What the add-on receives is held to the same response contract as the server tests' client.
    const json = /json/.test(Object.entries(r.headers).find(([name]) => name.toLowerCase() === 'content-type')?.[1] ?? 'json');
    checkResponse((p.method ?? 'get').toUpperCase(), new URL(p.url).pathname, r.status, r.body ? (json ? JSON.parse(r.body) : r.body) : undefined);
    if (r.status >= 400 && !p.muteHttpExceptions) throw new Error(`Exception: Request failed returned code ${r.status}`);
    return response(r);
  };

  const globals: Record<string, unknown> = {
    SpreadsheetApp: {
      getActiveSpreadsheet: () => ({
        getSheetByName: (name: string) => spreadsheet.sheets.find((s) => s.getName() === name) ?? null,
        getSheets: () => [...spreadsheet.sheets],
        insertSheet: (name: string) => {
          quotas.writing('insertSheet');
          return fake.addSheet(name, []);
        },
      }),
      getActiveSheet: () => spreadsheet.active,
      getActiveRange: () => {
        const s = spreadsheet.selection;
        return s ? spreadsheet.active.getRange(s.row, s.column ?? 1, s.rows, s.columns ?? 1) : null;
      },
      flush: () => undefined,
      getUi: () => ({
        alert: (_title: string, message: string) => void alerts.push(message),
        ButtonSet: { OK: 'OK', OK_CANCEL: 'OK_CANCEL' },
        Button: { OK: 'OK' },
      }),
    },
    PropertiesService: { getUserProperties: () => userProperties, getDocumentProperties: () => documentProperties },
    ScriptApp: {
      newTrigger: (handler: string) => ({
        timeBased: () => ({
          after: (afterMs: number) => ({
            create: () => {
              if (triggers.length >= 20) throw new Error('Exception: This script has too many triggers.');
              const trigger = { handler, afterMs, getHandlerFunction: () => handler };
              triggers.push(trigger);
              return trigger;
            },
          }),
        }),
      }),
      getProjectTriggers: () => [...triggers],
      deleteTrigger: (trigger: FakeTrigger) => {
        const i = triggers.indexOf(trigger);
        if (i >= 0) triggers.splice(i, 1);
      },
    },
    LockService: {
      getDocumentLock: () => ({
        tryLock: () => (locked ? false : (locked = true)),
        releaseLock: () => void (locked = false),
      }),
    },
    CacheService: { getUserCache: () => userCache, getDocumentCache: () => documentCache, getScriptCache: () => scriptCache },
    // Simulated: a sleep moves the clock the quotas are measured by, and the test does not wait.
    Utilities: {
      sleep: (ms: number) => {
        quotas.advance(ms);
        quotas.check();
      },
      // Bytes as Apps Script gives them: signed, -128 to 127.
      computeDigest: (algorithm: string, text: string, charset: string) => {
        if (algorithm !== 'SHA_256' || charset !== 'UTF_8') throw new Error(`Exception: the fake computes SHA_256 of UTF_8 only, not ${algorithm}/${charset}`);
        return [...createHash('sha256').update(text, 'utf8').digest()].map((b) => (b > 127 ? b - 256 : b));
      },
      DigestAlgorithm: { SHA_256: 'SHA_256' },
      Charset: { UTF_8: 'UTF_8' },
    },
    UrlFetchApp: {
      fetch: (url: string, p: Params = {}) => timed(() => checked(http.fetch(toRequest(url, p)), { ...p, url })),
      fetchAll: (requests: Array<Params & { url: string }>) =>
        timed(() => http.fetchAll(requests.map((p) => toRequest(p.url, p))).map((r, i) => checked(r, requests[i]!))),
    },
    console: { log: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    Logger: { log: () => undefined },
  };
  const fake: FakeGas = {
    spreadsheet,
    addSheet(name, rows) {
      const sheet = new FakeSheet(name, rows);
      sheet.quotas = quotas;
      spreadsheet.sheets.push(sheet);
      spreadsheet.active ??= sheet;
      return sheet;
    },
    userProperties,
    documentProperties,
    userCache,
    documentCache,
    quotas,
    globals,
    triggers,
    http,
    alerts,
  };
  return fake;
}
