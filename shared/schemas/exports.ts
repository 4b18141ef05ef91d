/** Exports: every establishment matching a company search, written to a file by a job (decisions.md, "Registry changes"). */
import { Type } from '@sinclair/typebox';
import { ClosedObject, IdOf, StringEnum } from './common.ts';
import { companyFilters } from './companies.ts';
import { JobWebhook } from './jobs.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const MAX_EXPORT_ROWS = 1_000_000;
export const DEFAULT_EXPORT_ROWS = 100_000;
/** The media type each format is served as. */
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson' };

// Only the imported registry can search, so an export names no sources.
const { companyOrder: _sources, ...filters } = companyFilters;

/** An export has rows, not items: its one event is `job.finished`. */
const ExportWebhook = ClosedObject("Where to POST the export's `job.finished` event, signed with `secret`.", {
  url: JobWebhook.properties.url,
  secret: JobWebhook.properties.secret,
});

export const ExportBody = Type.Object(
  {
    ...filters,
    format: StringEnum(EXPORT_FORMATS, { description: '`csv` (a header row, nested fields flattened) or `ndjson` (one company per line).' }),
    maxRows: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_EXPORT_ROWS,
        default: DEFAULT_EXPORT_ROWS,
        description: `At most this many rows, 1 to ${MAX_EXPORT_ROWS.toLocaleString('en')}; default ${DEFAULT_EXPORT_ROWS.toLocaleString('en')}.`,
      }),
    ),
    webhook: Type.Optional(ExportWebhook),
  },
  { additionalProperties: false, description: 'Company search filters, all optional, and the file to write.' },
);

export const ExportStarted = ClosedObject(
  'The export job, queued: follow it with the jobs API, then read the file.',
  {
    jobId: IdOf('The export job.'),
    status: StringEnum(['queued'] as const, { description: 'Always `queued` at first.' }),
  },
  { title: 'ExportStarted' },
);

/** The file itself: not JSON, so described rather than typed. */
export const ExportFile = Type.String({ description: 'The export file: CSV (`text/csv; charset=utf-8`) or NDJSON (`application/x-ndjson`).' });
