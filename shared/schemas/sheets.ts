/** Sheets: prospecta's extension holding the rows campaigns are created from. */
import { Type } from '@sinclair/typebox';
import { IdOf, OpenObject, Timestamp } from './common.ts';

export const RowId = Type.String({ minLength: 1, maxLength: 64, description: 'Row identifier, 1 to 64 characters.' });

export const SheetRow = Type.Object(
  {
    rowId: RowId,
    values: Type.Record(Type.String(), Type.String({ maxLength: 5000 }), {
      description: 'Column label → cell value (at most 5000 characters).',
    }),
  },
  { additionalProperties: false, description: 'One row of a sheet.' },
);

const Rows = Type.Array(SheetRow, { maxItems: 1000, description: 'At most 1000 rows per call.' });

export const SheetParams = Type.Object({ sheetId: IdOf('The sheet.') }, { additionalProperties: false });

export const SheetCreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 120, description: 'Sheet name, 1 to 120 characters.' }), rows: Rows },
  { additionalProperties: false },
);

export const SheetRowsBody = Type.Object(
  { rows: Rows },
  { additionalProperties: false, description: 'Rows to insert, or to replace when their `rowId` exists.' },
);

export const SheetSaved = Type.Object(
  { sheetId: IdOf('The sheet.'), rowCount: Type.Integer({ minimum: 0, description: 'Rows in the sheet now.' }) },
  { additionalProperties: false },
);

export const Sheet = OpenObject('A sheet and its rows.', {
  sheetId: IdOf('The sheet.'),
  name: Type.String(),
  rowCount: Type.Integer({ minimum: 0 }),
  rows: Type.Array(SheetRow),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
