/** The types the server and the add-on share: operation inputs and outputs, and the records. */
import type { Static } from '@sinclair/typebox';
import type { CadenceStep as CadenceStepSchema } from './schemas/cadences.ts';
import type { Campaign as CampaignSchema, CampaignDetail as CampaignDetailSchema } from './schemas/campaigns.ts';
import type { Company as CompanySchema } from './schemas/companies.ts';
import type { Credits as CreditsSchema } from './schemas/credits.ts';
import type {
  Prospect as ProspectSchema,
  ProspectEvent as ProspectEventSchema,
  ProspectStatus as ProspectStatusSchema,
} from './schemas/prospects.ts';
import type {
  HydratedLead as HydratedLeadSchema,
  Person as PersonSchema,
  StreamDone as StreamDoneSchema,
} from './schemas/search.ts';
import type { Sheet as SheetSchema, SheetRow as SheetRowSchema } from './schemas/sheets.ts';
import type { Template as TemplateSchema } from './schemas/templates.ts';

export type { InputOf, OperationId, OutputOf } from './operations/index.ts';

export type Template = Static<typeof TemplateSchema>;
export type CadenceStep = Static<typeof CadenceStepSchema>;
export type Campaign = Static<typeof CampaignSchema>;
export type CampaignDetail = Static<typeof CampaignDetailSchema>;
export type ProspectStatus = Static<typeof ProspectStatusSchema>;
export type Prospect = Static<typeof ProspectSchema>;
export type ProspectEvent = Static<typeof ProspectEventSchema>;
export type Sheet = Static<typeof SheetSchema>;
export type SheetRow = Static<typeof SheetRowSchema>;
export type Credits = Static<typeof CreditsSchema>;
export type Person = Static<typeof PersonSchema>;
export type HydratedLead = Static<typeof HydratedLeadSchema>;
export type Company = Static<typeof CompanySchema>;
export type StreamDone = Static<typeof StreamDoneSchema>;
