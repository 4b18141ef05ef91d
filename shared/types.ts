/**
 * The types the server and the add-on share: operation inputs and outputs, and the records, each
 * the `Static` of its schema so that the wire format is written once.
 */
import type { Static } from '@sinclair/typebox';
import type { AiColumnResult as AiColumnResultSchema, ResearchResult as ResearchResultSchema } from './schemas/ai.ts';
import type { CadenceStep as CadenceStepSchema } from './schemas/cadences.ts';
import type {
  Campaign as CampaignSchema,
  CampaignDetail as CampaignDetailSchema,
  StatusCounts as StatusCountsSchema,
} from './schemas/campaigns.ts';
import type { Health as HealthSchema, ProviderCatalog as ProviderCatalogSchema } from './schemas/catalog.ts';
import type { Activity as ActivitySchema, Company as CompanySchema, CompanyStreamDone as CompanyStreamDoneSchema } from './schemas/companies.ts';
import type { Credits as CreditsSchema } from './schemas/credits.ts';
import type {
  Attempt as AttemptSchema,
  EnrichedFields as EnrichedFieldsSchema,
  EnrichResult as EnrichResultSchema,
} from './schemas/enrichment.ts';
import type {
  Prospect as ProspectSchema,
  ProspectEvent as ProspectEventSchema,
  ProspectStatus as ProspectStatusSchema,
} from './schemas/prospects.ts';
import type {
  Address as AddressSchema,
  CodeAndDescription as CodeAndDescriptionSchema,
  Partner as PartnerSchema,
  PhoneNumber as PhoneNumberSchema,
  TaxOption as TaxOptionSchema,
  TaxRegime as TaxRegimeSchema,
} from './schemas/registry.ts';
import type {
  HydratedLead as HydratedLeadSchema,
  Person as PersonSchema,
  StreamDone as StreamDoneSchema,
} from './schemas/search.ts';
import type { Sheet as SheetSchema, SheetRow as SheetRowSchema } from './schemas/sheets.ts';
import type { Template as TemplateSchema } from './schemas/templates.ts';

export type { InputOf, OperationId, OutputOf, StreamEventOf } from './operations/index.ts';

export type Health = Static<typeof HealthSchema>;
export type ProviderCatalog = Static<typeof ProviderCatalogSchema>;

export type CodeAndDescription = Static<typeof CodeAndDescriptionSchema>;
export type Address = Static<typeof AddressSchema>;
export type Partner = Static<typeof PartnerSchema>;
export type PhoneNumber = Static<typeof PhoneNumberSchema>;
export type TaxOption = Static<typeof TaxOptionSchema>;
export type TaxRegime = Static<typeof TaxRegimeSchema>;
export type Company = Static<typeof CompanySchema>;
export type Activity = Static<typeof ActivitySchema>;
export type CompanyStreamDone = Static<typeof CompanyStreamDoneSchema>;

export type Person = Static<typeof PersonSchema>;
export type HydratedLead = Static<typeof HydratedLeadSchema>;
export type StreamDone = Static<typeof StreamDoneSchema>;

export type EnrichedFields = Static<typeof EnrichedFieldsSchema>;
export type ProviderAttempt = Static<typeof AttemptSchema>;
export type EnrichResult = Static<typeof EnrichResultSchema>;

export type ResearchResult = Static<typeof ResearchResultSchema>;
export type AiColumnResult = Static<typeof AiColumnResultSchema>;

export type Template = Static<typeof TemplateSchema>;
export type CadenceStep = Static<typeof CadenceStepSchema>;
export type StatusCounts = Static<typeof StatusCountsSchema>;
export type Campaign = Static<typeof CampaignSchema>;
export type CampaignDetail = Static<typeof CampaignDetailSchema>;
export type ProspectStatus = Static<typeof ProspectStatusSchema>;
export type Prospect = Static<typeof ProspectSchema>;
export type ProspectEvent = Static<typeof ProspectEventSchema>;
export type Sheet = Static<typeof SheetSchema>;
export type SheetRow = Static<typeof SheetRowSchema>;

export type Credits = Static<typeof CreditsSchema>;
