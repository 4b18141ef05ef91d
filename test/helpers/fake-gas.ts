/**
 * Faithful fakes of the Apps Script services the add-on uses, installed as globals:
 * SpreadsheetApp (typed 2-D values, dimension checks on setValues, notes, active sheet and range,
 * new sheets), PropertiesService, ScriptApp time-driven triggers, LockService, Utilities.sleep and
 * UrlFetchApp, whose fetch/fetchAll make real synchronous HTTP calls to a real server.
 */
import { checkResponse } from './contract.ts';
import { syncHttp } from './sync-http.ts';

type Cell = string | number | boolean | Date | null;

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
  getLastRow = () => this.row + this.rows - 1;
  getNumRows = () => this.rows;

  getValues(): Cell[][] {
    return Array.from({ length: this.rows }, (_, r) =>
      Array.from({ length: this.columns }, (_, c) => this.sheet.cell(this.row + r, this.column + c) ?? ''),
    );
  }

  setValues(values: Cell[][]): FakeRange {
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
    this.sheet.notes.set(`${this.row}:${this.column}`, note);
    return this;
  }
}

export class FakeSheet {
  readonly grid: Cell[][] = [];
  readonly notes = new Map<string, string>();
  writes = 0;

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

  getName = () => this.name;
  getLastRow = () => {
    for (let r = this.grid.length; r > 0; r--) if (this.grid[r - 1]!.some((v) => v !== '' && v !== null && v !== undefined)) return r;
    return 0;
  };
  getLastColumn = () => Math.max(0, ...this.grid.map((row) => row.reduce<number>((last, v, i) => (v !== '' && v !== null && v !== undefined ? i + 1 : last), 0)));

  getRange(row: number, column: number, rows = 1, columns = 1): FakeRange {
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
  getProperty = (key: string) => this.data.get(key) ?? null;
  setProperty(key: string, value: string) {
    if (value.length > 9 * 1024) throw new Error('Exception: Argument too large: value');
    this.data.set(key, value);
    return this;
  }
  deleteProperty(key: string) {
    this.data.delete(key);
    return this;
  }
}

interface FakeTrigger {
  handler: string;
  afterMs: number;
  getHandlerFunction(): string;
}

export interface FakeGas {
  spreadsheet: { sheets: FakeSheet[]; active: FakeSheet; selection: { row: number; rows: number } | null };
  addSheet(name: string, rows: Cell[][]): FakeSheet;
  userProperties: FakeProperties;
  documentProperties: FakeProperties;
  triggers: FakeTrigger[];
  http: ReturnType<typeof syncHttp>;
  alerts: string[];
  uninstall(): void;
}

/** Installs the fakes on globalThis; `uninstall()` removes them. */
export function installFakeGas(): FakeGas {
  const http = syncHttp();
  const userProperties = new FakeProperties();
  const documentProperties = new FakeProperties();
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
  const toRequest = (url: string, p: Params) => ({ url, method: (p.method ?? 'get') as 'get', headers: p.headers ?? {}, ...(p.payload !== undefined ? { payload: p.payload } : {}) });
  const checked = (r: { status: number; headers: Record<string, string>; body: string }, p: Params & { url: string }) => {
    // What the add-on receives is held to the same response contract as the server tests' client.
    checkResponse((p.method ?? 'get').toUpperCase(), new URL(p.url).pathname, r.status, r.body ? JSON.parse(r.body) : undefined);
    if (r.status >= 400 && !p.muteHttpExceptions) throw new Error(`Exception: Request failed returned code ${r.status}`);
    return response(r);
  };

  const globals: Record<string, unknown> = {
    SpreadsheetApp: {
      getActiveSpreadsheet: () => ({
        getSheetByName: (name: string) => spreadsheet.sheets.find((s) => s.getName() === name) ?? null,
        insertSheet: (name: string) => fake.addSheet(name, []),
      }),
      getActiveSheet: () => spreadsheet.active,
      getActiveRange: () => (spreadsheet.selection ? spreadsheet.active.getRange(spreadsheet.selection.row, 1, spreadsheet.selection.rows, 1) : null),
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
    Utilities: { sleep: (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms) },
    UrlFetchApp: {
      fetch: (url: string, p: Params = {}) => checked(http.fetch(toRequest(url, p)), { ...p, url }),
      fetchAll: (requests: Array<Params & { url: string }>) =>
        http.fetchAll(requests.map((p) => toRequest(p.url, p))).map((r, i) => checked(r, requests[i]!)),
    },
  };
  const previous = new Map(Object.keys(globals).map((k) => [k, (globalThis as Record<string, unknown>)[k]]));
  Object.assign(globalThis, globals);

  const fake: FakeGas = {
    spreadsheet,
    addSheet(name, rows) {
      const sheet = new FakeSheet(name, rows);
      spreadsheet.sheets.push(sheet);
      spreadsheet.active ??= sheet;
      return sheet;
    },
    userProperties,
    documentProperties,
    triggers,
    http,
    alerts,
    uninstall() {
      for (const [k, v] of previous) (globalThis as Record<string, unknown>)[k] = v;
    },
  };
  return fake;
}
