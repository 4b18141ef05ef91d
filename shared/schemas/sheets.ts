/** Sheets: prospecta's extension holding the rows campaigns are created from. */
import { Type } from '@sinclair/typebox';
import { AnyName, ClosedObject, IdOf, Timestamp } from './common.ts';
import { NOT_BLANK } from './templates.ts';

export const RowId = Type.String({ minLength: 1, maxLength: 64, description: 'Row identifier, 1 to 64 characters.' });

export const SheetRow = ClosedObject(
  'One row of a sheet.',
  {
    rowId: RowId,
    values: Type.Record(AnyName, Type.String({ maxLength: 5000 }), {
      additionalProperties: false, // every key matches the pattern: says only that this map is all strings
      description: 'Column label → cell value (at most 5000 characters).',
    }),
  },
  { title: 'SheetRow' },
);

const Rows = Type.Array(SheetRow, { maxItems: 1000, description: 'At most 1000 rows per call.' });

export const SheetParams = Type.Object({ sheetId: IdOf('The sheet.') }, { additionalProperties: false });

export const SheetCreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 120, pattern: NOT_BLANK, description: 'Sheet name, 1 to 120 characters, not blank; stored trimmed.' }), rows: Rows },
  { additionalProperties: false },
);

export const SheetRowsBody = Type.Object(
  { rows: Rows },
  { additionalProperties: false, description: 'Rows to insert, or to replace when their `rowId` exists.' },
);

export const SheetSaved = ClosedObject(
  'The sheet was saved.',
  {
    sheetId: IdOf('The sheet.'),
    rowCount: Type.Integer({ minimum: 0, description: 'Rows in the sheet now.' }),
  },
  { title: 'SheetSaved' },
);

export const Sheet = ClosedObject(
  'A sheet and its rows.',
  {
    sheetId: IdOf('The sheet.'),
    name: Type.String({ description: 'Its name.' }),
    rowCount: Type.Integer({ minimum: 0, description: 'Rows in the sheet.' }),
    rows: Type.Array(SheetRow, { description: 'Every row, in the order they were first sent.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Sheet' },
);
