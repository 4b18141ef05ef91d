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
  };
}

export function sheetNamed(name: string): SheetPort | null {
  const sheet = SpreadsheetApp.getActiveSpreadsheet().getSheetByName(name);
  return sheet ? sheetPort(sheet) : null;
}
