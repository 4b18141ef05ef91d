/** Jobs: one bulk-friendly operation run over many items in the background (decisions.md, "Jobs"). */
import { Type, type TSchema } from '@sinclair/typebox';
import { AiColumnBody, ResearchBody } from './ai.ts';
import { CnpjBatchBody } from './companies.ts';
import { EnrichBody } from './enrichment.ts';
import { HydrateBody } from './search.ts';
import { ClosedObject, CreditsCharged, ErrorBody, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

/** The operations a job may run: each takes one request body per item and is charged per call. */
export const JOB_OPERATIONS = ['enrich', 'lookupCnpjBatch', 'hydratePeople', 'aiColumn', 'research'] as const;
export type JobOperation = (typeof JOB_OPERATIONS)[number];
/** What a stored job may be: one of those, or an export (`exportCompanies`), which has rows rather than items. */
export const JOB_KINDS = [...JOB_OPERATIONS, 'exportCompanies'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const MAX_JOB_ITEMS = 10_000;
export const JOB_STATUSES = ['queued', 'running', 'done', 'stopped', 'cancelled', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** The statuses a job ends in: it changes no more, and its results are kept 7 days from then. */
export const ENDED_JOB_STATUSES: readonly JobStatus[] = ['done', 'stopped', 'cancelled', 'failed'];
export const JOB_EVENTS = ['job.finished', 'job.item'] as const;
export type JobEvent = (typeof JOB_EVENTS)[number];

export const JobItemIn = ClosedObject('One item: a request body of the job\'s operation.', {
  itemId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "The item's name in the results, unique within the job; by default its index as a string." })),
  input: Type.Object({}, { additionalProperties: true, description: "A valid request body of the job's operation, checked before anything is queued." }),
});

export const JobWebhook = ClosedObject('Where to POST the job\'s events, signed with `secret`.', {
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'An `https:` URL on a public address.' }),
  secret: Type.String({ minLength: 16, maxLength: 256, description: 'The HMAC-SHA256 key of `Prospecta-Signature`, 16 to 256 characters.' }),
  events: Type.Optional(
    Type.Array(StringEnum(JOB_EVENTS), { minItems: 1, maxItems: 2, uniqueItems: true, description: 'Events to deliver; default `["job.finished"]`.' }),
  ),
});

/** Each job operation's request body: what one item's `input` is. */
const ITEM_BODIES: Record<JobOperation, TSchema> = {
  enrich: EnrichBody,
  lookupCnpjBatch: CnpjBatchBody,
  hydratePeople: HydrateBody,
  aiColumn: AiColumnBody,
  research: ResearchBody,
};

export const JobStartBody = ClosedObject(
  'A job: the operation, its items, and optionally a webhook and a credit cap.',
  {
    operation: StringEnum(JOB_OPERATIONS, { description: 'The operation each item runs as.' }),
    items: Type.Array(JobItemIn, { minItems: 1, maxItems: MAX_JOB_ITEMS, description: `1 to ${MAX_JOB_ITEMS.toLocaleString('en')} items, run in order.` }),
    webhook: Type.Optional(JobWebhook),
    maxCredits: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'The job stops (status `stopped`) before it would spend more.' })),
  },
  {
    // Which body an item's `input` is depends on `operation`: one `if`/`then` per operation, so
    // that a request the document calls valid is one the server takes (the server checks each
    // item against its operation's body before anything is queued).
    allOf: JOB_OPERATIONS.map((operation) => ({
      if: { type: 'object', properties: { operation: { const: operation } }, required: ['operation'] },
      then: { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { input: ITEM_BODIES[operation] } } } } },
    })),
  },
);

export const JobStarted = ClosedObject(
  'The job, queued.',
  {
    jobId: IdOf('The job.'),
    status: StringEnum(['queued'] as const, { description: 'Always `queued` at first.' }),
    total: Type.Integer({ minimum: 1, description: 'Items in the job.' }),
    maxCredits: Nullable(
      Type.Integer({ minimum: 0 }),
      "The most its items may charge: the request's `maxCredits`, lowered to what is left of the agent message's cap when the built-in agent started it; null: no cap.",
    ),
  },
  { title: 'JobStarted' },
);

export const Job = ClosedObject(
  'A job and its progress.',
  {
    jobId: IdOf('The job.'),
    operation: StringEnum(JOB_KINDS, { description: 'The operation each item runs as; `exportCompanies` for an export.' }),
    status: StringEnum(JOB_STATUSES, {
      description: 'queued, running, or how it ended: done, stopped (maxCredits, or the balance ran out), cancelled, failed.',
    }),
    total: Type.Integer({ minimum: 0, description: 'Items in the job; for an export, its `maxRows` while it runs and the rows written once it ends.' }),
    done: Type.Integer({ minimum: 0, description: 'Items finished with an answer; for an export, rows written.' }),
    failed: Type.Integer({ minimum: 0, description: 'Items finished with an error.' }),
    creditsCharged: Type.Integer({ minimum: 0, description: 'Credits its items charged.' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    finishedAt: Nullable(Timestamp, 'When it ended; null while it is queued or running.'),
  },
  { title: 'Job' },
);

export const JobList = ClosedObject('The workspace\'s jobs, newest first.', { jobs: Type.Array(Job, { description: 'Newest first.' }) });

/** A cancel takes no body (an empty object at most). */
export const JobCancelBody = ClosedObject('Nothing: the job is named by the path.', {});

export const JobParams = Type.Object({ jobId: IdOf('The job.') }, { additionalProperties: false });

export const JobResultsQuery = ClosedObject('Which page of results.', {
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The `nextCursor` of the previous page.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Results per page.' })),
});

export const JobResult = ClosedObject(
  "One finished item: the operation's own answer, or its error.",
  {
    itemId: Type.String({ description: "The item's id." }),
    status: StringEnum(['ok', 'error'] as const, { description: 'ok with `output`, error with `error`.' }),
    output: Type.Optional(Type.Unknown({ description: 'The answer, the same JSON as the synchronous call.' })),
    error: Type.Optional(ErrorBody),
    creditsCharged: CreditsCharged,
  },
  { title: 'JobResult' },
);

export const JobResults = ClosedObject('Finished items, in item order.', {
  results: Type.Array(JobResult, { description: 'Finished items, in item order.' }),
  nextCursor: Nullable(Type.String(), 'The next page\'s cursor; null once every finished item has been given.'),
});
