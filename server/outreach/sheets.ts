/**
 * Sheets (prospecta's extension): rows handed over by the add-on or an API client, from which
 * campaigns create prospects. Rows are documents of their own, keyed by sheet and row id, so an
 * upsert of 1000 rows is one bulk write and a campaign reads only the rows it needs.
 */
import { randomUUID } from 'node:crypto';
import type { SheetRow } from '../../shared/types.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

export type { SheetRow };

export interface SheetDoc {
  _id: string;
  workspaceId: string;
  name: string;
  /** Position the next new row takes, so rows read back in the order they were first sent. */
  nextPosition: number;
  createdAt: Date;
  updatedAt: Date;
}

interface RowDoc extends SheetRow {
  _id: string;
  sheetId: string;
  position: number;
}

export const sheetIndexes: IndexDeclaration[] = [
  { collection: 'sheets', keys: { workspaceId: 1 } },
  { collection: 'sheet_rows', keys: { sheetId: 1, position: 1 } },
];

const rowKey = (sheetId: string, rowId: string) => `${sheetId}:${rowId}`;

export class Sheets {
  private readonly sheets: Collection<SheetDoc>;
  private readonly rows: Collection<RowDoc>;

  constructor(store: Store) {
    this.sheets = store.collection<SheetDoc>('sheets');
    this.rows = store.collection<RowDoc>('sheet_rows');
  }

  get(workspaceId: string, sheetId: string): Promise<SheetDoc | null> {
    return this.sheets.findOne({ _id: sheetId, workspaceId });
  }

  async create(workspaceId: string, name: string, rows: SheetRow[]): Promise<{ sheet: SheetDoc; rowCount: number }> {
    const now = new Date();
    const sheet: SheetDoc = { _id: randomUUID(), workspaceId, name, nextPosition: 0, createdAt: now, updatedAt: now };
    await this.sheets.insertOne(sheet);
    return { sheet, rowCount: (await this.upsert(sheet, rows))! };
  }

  /**
   * Inserts new rows and replaces known ones (by `rowId`); the last of a repeated id wins.
   * Answers the sheet's row count (counted, never stored), or null when the sheet is gone.
   */
  async upsert(sheet: SheetDoc, rows: SheetRow[]): Promise<number | null> {
    const unique = [...new Map(rows.map((r) => [r.rowId, r])).values()];
    if (unique.length > 0) {
      // Reserve positions for rows that may be new; replaced rows keep theirs.
      const reserved = await this.sheets.findOneAndUpdate(
        { _id: sheet._id },
        { $inc: { nextPosition: unique.length } },
        { returnDocument: 'before' },
      );
      if (!reserved) return null;
      await this.rows.bulkWrite(
        unique.map((row, i) => ({
          updateOne: {
            filter: { _id: rowKey(sheet._id, row.rowId) },
            update: { $set: { values: row.values }, $setOnInsert: { sheetId: sheet._id, rowId: row.rowId, position: reserved.nextPosition + i } },
            upsert: true,
          },
        })),
      );
    }
    const touched = await this.sheets.updateOne({ _id: sheet._id }, { $set: { updatedAt: new Date() } });
    return touched.matchedCount === 0 ? null : this.rows.countDocuments({ sheetId: sheet._id });
  }

  async allRows(sheetId: string): Promise<SheetRow[]> {
    const docs = await this.rows.find({ sheetId }, { sort: { position: 1 } }).toArray();
    return docs.map(({ rowId, values }) => ({ rowId, values }));
  }

  /** The rows asked for that exist, by id. */
  async someRows(sheetId: string, rowIds: string[]): Promise<Map<string, SheetRow>> {
    const docs = await this.rows.find({ _id: { $in: rowIds.map((id) => rowKey(sheetId, id)) } }).toArray();
    return new Map(docs.map(({ rowId, values }) => [rowId, { rowId, values }]));
  }

  async remove(workspaceId: string, sheetId: string): Promise<boolean> {
    const deleted = (await this.sheets.deleteOne({ _id: sheetId, workspaceId })).deletedCount === 1;
    if (deleted) await this.rows.deleteMany({ sheetId });
    return deleted;
  }
}
