/** Prospects: one person of a campaign with a generated message and a pipeline status. */
import { Type } from '@sinclair/typebox';
import { Cadence } from './cadences.ts';
import { IdOf, OpenObject, StringEnum, Timestamp } from './common.ts';

export const PROSPECT_STATUSES = ['ready', 'sending', 'awaiting_reply', 'replied', 'paused', 'failed'] as const;
export const EVENT_TYPES = ['created', 'message_edited', 'status_changed', 'cadence_edited'] as const;

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

export const Prospect = OpenObject('A prospect: its message, captured context and stage.', {
  prospectId: IdOf('The prospect.'),
  campaignId: IdOf('Its campaign.'),
  sheetId: IdOf('The sheet of its source row.'),
  rowId: Type.String({ description: 'Its source row.' }),
  status: ProspectStatus,
  ...messageFields,
  cadence: Type.Union([Cadence, Type.Null()], { description: "Its own cadence, or null to follow the campaign's." }),
  context: Type.Record(Type.String(), Type.String(), {
    description: 'The source row when captured: column label → cell value.',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

export const ProspectList = OpenObject('Prospects of the workspace.', { prospects: Type.Array(Prospect) });

export const ProspectDeleted = Type.Object(
  {
    deleted: Type.Boolean({ description: 'Whether the prospect was deleted.' }),
    campaignDeleted: Type.Boolean({ description: 'Always false: the campaign remains, even when empty.' }),
  },
  { additionalProperties: false },
);

export const ProspectEvent = OpenObject('One entry of a prospect history.', {
  eventId: IdOf('The event.'),
  prospectId: IdOf('The prospect.'),
  at: Timestamp,
  type: StringEnum(EVENT_TYPES),
  data: OpenObject('`status_changed`: `from`, `to`; `message_edited`: the fields changed.'),
});

export const ProspectEvents = OpenObject('The history of a prospect, oldest first.', {
  events: Type.Array(ProspectEvent),
});
