/** Campaigns: outreach configuration, a cadence and prospects created from sheet rows. */
import { Type, type TInteger } from '@sinclair/typebox';
import { Cadence } from './cadences.ts';
import { ClosedObject, IdOf, Nullable, StringEnum, Timestamp } from './common.ts';
import { PROSPECT_STATUSES, Prospect } from './prospects.ts';
import { RowId } from './sheets.ts';
import { BusinessContext, Language, Name, Offering, SenderName, Tone } from './templates.ts';

/** Present only when the campaign's language is one the built-in writer does not know. */
const LanguageNote = Type.String({
  minLength: 1,
  description: 'Present when `language` is one the built-in writer does not know: its messages and the default cadence are then in Portuguese.',
});

export const CampaignParams = Type.Object({ campaignId: IdOf('The campaign.') }, { additionalProperties: false });

const editableFields = {
  name: Name,
  offering: Offering,
  senderName: Type.Optional(SenderName),
  tone: Type.Optional(Tone),
  businessContext: Type.Optional(BusinessContext),
};

export const CampaignCreateBody = Type.Object(
  {
    // Required unless the template holds them (its campaignName and offering); checked by the handler.
    name: Type.Optional(Name),
    offering: Type.Optional(Offering),
    senderName: editableFields.senderName,
    tone: editableFields.tone,
    businessContext: editableFields.businessContext,
    language: Type.Optional(Language),
    sheetId: Type.Optional(IdOf('Sheet holding the rows to create prospects from.')),
    rowIds: Type.Optional(Type.Array(RowId, { maxItems: 25, description: 'Rows of the sheet, at most 25.' })),
    templateId: Type.Optional(IdOf('Template to take the configuration from; the fields sent prevail.')),
  },
  {
    additionalProperties: false,
    // A template always holds an offering and a name (its campaignName, else its own name).
    anyOf: [{ required: ['templateId'] }, { required: ['name', 'offering'] }],
    // Rows are rows of a sheet: `rowIds` needs `sheetId`.
    allOf: [
      {
        if: { type: 'object', properties: { rowIds: { type: 'array' } }, required: ['rowIds'] },
        then: { type: 'object', properties: { sheetId: { type: 'string' } }, required: ['sheetId'] },
      },
    ],
    description:
      'A new draft campaign, with one prospect per selected row of `sheetId` (`rowIds` needs it). `name` and `offering` are required without a template; ' +
      "with one, they default to its `offering` and its `campaignName` (else the template's own name).",
  },
);

export const CampaignCreated = ClosedObject(
  'The new draft campaign.',
  {
    campaignId: IdOf('The new campaign.'),
    campaignName: Type.String({ description: 'Its name.' }),
    created: Type.Integer({ minimum: 0, description: 'Prospects created.' }),
    languageNote: Type.Optional(LanguageNote),
  },
  { title: 'CampaignCreated' },
);

/** The language is set at creation only. */
export const CampaignUpdateBody = Type.Partial(Type.Object(editableFields, { additionalProperties: false }), {
  description: 'Fields to change; omitted fields keep their value.',
});

export const CadenceUpdateBody = Type.Object(
  {
    steps: Cadence,
    prospectId: Type.Optional(IdOf("Edit this prospect's cadence instead of the campaign's.")),
  },
  { additionalProperties: false },
);

export const CadenceUpdated = ClosedObject(
  'The cadence as saved.',
  {
    campaignId: IdOf('The campaign.'),
    prospectId: Type.Optional(IdOf('The prospect, when its own cadence was edited.')),
    cadence: Cadence,
  },
  { title: 'CadenceUpdated' },
);

export const AddProspectsBody = Type.Object(
  {
    sheetId: IdOf('Sheet holding the rows.'),
    rowIds: Type.Array(RowId, { minItems: 1, maxItems: 25, description: 'Rows of the sheet, 1 to 25.' }),
  },
  { additionalProperties: false },
);

export const ProspectsAdded = ClosedObject(
  'Prospects were added.',
  {
    ok: Type.Boolean({ description: 'Always true on success.' }),
    added: Type.Integer({ minimum: 0, description: 'Prospects created.' }),
    skipped: Type.Integer({ minimum: 0, description: 'Rows already in the campaign.' }),
  },
  { title: 'ProspectsAdded' },
);

export const StatusCounts = ClosedObject(
  'Prospects in each pipeline status, all six present.',
  Object.fromEntries(
    PROSPECT_STATUSES.map((status) => [status, Type.Integer({ minimum: 0, description: `Prospects in \`${status}\`.` })]),
  ) as Record<
    (typeof PROSPECT_STATUSES)[number],
    TInteger
  >,
);

const campaignProperties = {
  campaignId: IdOf('The campaign.'),
  ...editableFields,
  language: Type.Optional(Language),
  languageNote: Type.Optional(LanguageNote),
  status: StringEnum(['draft'], { description: 'A campaign is created as a draft.' }),
  templateId: Nullable(IdOf('The template it was created from.'), 'The template it was created from, or null.'),
  cadence: Nullable(Cadence, 'Null until the campaign first receives prospects.'),
  counts: StatusCounts,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const Campaign = ClosedObject('A campaign.', campaignProperties, { title: 'Campaign' });

export const CampaignDetail = ClosedObject(
  'A campaign and all its prospects.',
  { ...campaignProperties, prospects: Type.Array(Prospect, { description: 'Oldest first.' }) },
  { title: 'CampaignDetail' },
);

export const CampaignList = ClosedObject(
  'Campaigns of the workspace, with prospect counts per status.',
  {
    campaigns: Type.Array(Campaign, { description: 'Oldest first.' }),
  },
  { title: 'CampaignList' },
);
