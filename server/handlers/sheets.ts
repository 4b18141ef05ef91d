/** Sheets (an extension): the rows campaigns are made from. Free; plan required. */
import { notFound } from '../http/errors.ts';
import type { Handler } from './types.ts';

export const createSheet: Handler<'createSheet'> = async ({ name, rows }, ctx) => {
  const { sheet, rowCount } = await ctx.services.sheets.create(ctx.workspaceId, name, rows);
  return { sheetId: sheet._id, rowCount };
};

export const upsertSheetRows: Handler<'upsertSheetRows'> = async ({ sheetId, rows }, ctx) => {
  const sheet = await ctx.services.sheets.get(ctx.workspaceId, sheetId);
  const rowCount = sheet && (await ctx.services.sheets.upsert(sheet, rows));
  if (rowCount === null) throw notFound('sheet');
  return { sheetId, rowCount };
};

export const getSheet: Handler<'getSheet'> = async ({ sheetId }, ctx) => {
  const sheet = await ctx.services.sheets.get(ctx.workspaceId, sheetId);
  if (!sheet) throw notFound('sheet');
  const { _id, name, createdAt, updatedAt } = sheet;
  const rows = await ctx.services.sheets.allRows(sheetId);
  return { sheetId: _id, name, rowCount: rows.length, rows, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
};

export const deleteSheet: Handler<'deleteSheet'> = async ({ sheetId }, ctx) => {
  if (!(await ctx.services.sheets.remove(ctx.workspaceId, sheetId))) throw notFound('sheet');
  return { deleted: true };
};
