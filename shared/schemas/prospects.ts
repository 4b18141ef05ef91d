/** Prospects: one person of a campaign with a generated message and a pipeline status. */
import { Type, type TProperties } from '@sinclair/typebox';
import { Cadence } from './cadences.ts';
import { AnyName, ClosedObject, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';

export const PROSPECT_STATUSES = ['ready', 'sending', 'awaiting_reply', 'replied', 'paused', 'failed'] as const;
export const EVENT_TYPES = ['created', 'message_edited', 'status_changed', 'cadence_edited'] as const;
export const MESSAGE_FIELDS = ['connectionNote', 'emailSubject', 'emailBody'] as const;

export const ProspectStatus = StringEnum(PROSPECT_STATUSES, { description: 'Pipeline stage.' });

const messageFields = {
  connectionNote: Type.String({
    maxLength: 300,
    description: 'Professional-network connection note, at most 300 characters.',
  }),
  emailSubject: Type.String({ maxLength: 300, description: 'Email subject, at most 300 characters.' }),
  emailBody: Type.String({ maxLength: 5000, description: 'Email body, at most 5000 characters.' }),
};

export const ProspectParams = Type.Object({ prospectId: IdOf('The prospect.') }, { additionalProperties: false });

export const ProspectListQuery = Type.Object(
  {
    campaignId: Type.Optional(IdOf('Only the prospects of this campaign.')),
    status: Type.Optional(ProspectStatus),
  },
  { additionalProperties: false },
);

export const ProspectUpdateBody = Type.Partial(
  Type.Object({ status: ProspectStatus, ...messageFields }, { additionalProperties: false }),
  { description: 'A new stage and/or message edits; nothing is regenerated.' },
);

/** Who wrote a prospect's message. */
export const WRITERS = ['model', 'built-in'] as const;

export const Prospect = ClosedObject(
  'A prospect: its message, captured context and stage.',
  {
    prospectId: IdOf('The prospect.'),
    campaignId: IdOf('Its campaign.'),
    sheetId: IdOf('The sheet of its source row.'),
    rowId: Type.String({ description: 'Its source row.' }),
    status: ProspectStatus,
    ...messageFields,
    writer: StringEnum(WRITERS, { description: 'Who wrote the message: the configured model, or the built-in writer.' }),
    cadence: Nullable(Cadence, "Its own cadence, or null to follow the campaign's."),
    context: Type.Record(AnyName, Type.String(), {
      additionalProperties: false, // every key matches the pattern: says only that this map is all strings
      description: 'The source row when captured: column label → cell value.',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Prospect' },
);

export const ProspectList = ClosedObject(
  'Prospects of the workspace.',
  {
    prospects: Type.Array(Prospect, { description: 'Oldest first.' }),
  },
  { title: 'ProspectList' },
);

export const ProspectDeleted = ClosedObject(
  'The prospect was deleted.',
  {
    deleted: Type.Boolean({ description: 'Whether the prospect was deleted.' }),
    campaignDeleted: Type.Boolean({ description: 'Always false: the campaign remains, even when empty.' }),
  },
  { title: 'ProspectDeleted' },
);

/** One kind of history entry: its `type` and the `data` it carries. */
const eventOf = <T extends (typeof EVENT_TYPES)[number], D extends TProperties>(type: T, description: string, data: D) =>
  ClosedObject(description, {
    eventId: IdOf('The event.'),
    prospectId: IdOf('The prospect.'),
    at: Timestamp,
    type: Type.Literal(type, { description: 'What happened.' }),
    data: ClosedObject(`What the \`${type}\` event records.`, data),
  });

export const ProspectEvent = Type.Union(
  [
    eventOf('created', 'The prospect was created from a sheet row.', {
      campaignId: IdOf('Its campaign.'),
      sheetId: IdOf('The sheet of its source row.'),
      rowId: Type.String({ description: 'Its source row.' }),
      writer: StringEnum(WRITERS, { description: 'Who wrote the message.' }),
    }),
    eventOf('message_edited', 'The message was edited.', {
      fields: Type.Array(StringEnum(MESSAGE_FIELDS), { description: 'The message fields that changed.' }),
    }),
    eventOf('status_changed', 'The pipeline stage changed.', { from: ProspectStatus, to: ProspectStatus }),
    eventOf('cadence_edited', "The prospect's cadence changed: its own, or the campaign's that it follows.", {
      scope: StringEnum(['prospect', 'campaign'], { description: "Whether its own cadence or the campaign's was edited." }),
      steps: Type.Integer({ minimum: 1, description: 'Steps in the cadence now.' }),
    }),
  ],
  { title: 'ProspectEvent', description: 'One entry of a prospect history.' },
);

export const ProspectEvents = ClosedObject(
  'The history of a prospect, oldest first.',
  {
    events: Type.Array(ProspectEvent, { description: 'Oldest first.' }),
  },
  { title: 'ProspectEvents' },
);
