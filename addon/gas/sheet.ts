/// <reference types="google-apps-script" />
/** SheetPort over a SpreadsheetApp sheet: whole blocks per call, as Apps Script wants. */
import { sameLabel } from '../features/columns.ts';
import type { SheetPort } from '../features/ports.ts';

const asText = (value: unknown) => (value instanceof Date ? value.toISOString().slice(0, 10) : value === null || value === undefined ? '' : String(value));

export function sheetPort(sheet: GoogleAppsScript.Spreadsheet.Sheet): SheetPort {
  const headers = () => {
    const columns = sheet.getLastColumn();
    return columns === 0 ? [] : sheet.getRange(1, 1, 1, columns).getValues()[0]!.map(asText);
  };
  return {
    name: sheet.getName(),
    headers,
    lastRow: () => sheet.getLastRow(),
    readRows(first, count) {
      const columns = Math.max(sheet.getLastColumn(), 1);
      return sheet.getRange(first, 1, count, columns).getValues().map((row) => row.map(asText));
    },
    ensureColumn(label) {
      const existing = headers().findIndex((h) => sameLabel(h, label));
      if (existing >= 0) return existing + 1;
      const column = sheet.getLastColumn() + 1;
      sheet.getRange(1, column).setValue(label);
      return column;
    },
    writeColumn(first, column, values) {
      if (values.length > 0) sheet.getRange(first, column, values.length, 1).setValues(values.map((v) => [v]));
    },
    setNote(row, column, note) {
      sheet.getRange(row, column).setNote(note);
    },
    hideColumn(column) {
      sheet.hideColumns(column);
    },
    replaceAll(rows) {
      sheet.clearContents();
      const width = Math.max(...rows.map((r) => r.length));
      if (rows.length > 0 && width > 0) sheet.getRange(1, 1, rows.length, width).setValues(rows.map((r) => [...r, ...Array(width - r.length).fill('')]));
    },
  };
}

/** The tab with this name, created when missing. */
export function sheetOrNew(name: string): SheetPort {
  const book = SpreadsheetApp.getActiveSpreadsheet();
  return sheetPort(book.getSheetByName(name) ?? book.insertSheet(name));
}

export function sheetNamed(name: string): SheetPort | null {
  const sheet = SpreadsheetApp.getActiveSpreadsheet().getSheetByName(name);
  return sheet ? sheetPort(sheet) : null;
}

/** Cells the spreadsheet has left of Google Sheets' limit: every tab's grid counts, filled or not. */
export function cellsLeft(limit: number): number {
  const used = SpreadsheetApp.getActiveSpreadsheet()
    .getSheets()
    .reduce((sum, sheet) => sum + sheet.getMaxRows() * sheet.getMaxColumns(), 0);
  return Math.max(0, limit - used);
}
