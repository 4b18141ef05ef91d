/**
 * Every operation id mapped to its handler. The `Handlers` type makes the compiler reject a
 * registry entry without a handler. Operations of later issues answer 501 until they land.
 */
import { aiColumn } from './ai-column.ts';
import { enrich } from './enrich.ts';
import { getCredits } from './get-credits.ts';
import { getHealth } from './get-health.ts';
import { hydratePeople } from './hydrate-people.ts';
import { listProviders } from './list-providers.ts';
import { lookupCnpjBatch } from './lookup-cnpj-batch.ts';
import { notImplemented } from './not-implemented.ts';
import { research } from './research.ts';
import { searchCompanies } from './search-companies.ts';
import { searchPeople } from './search-people.ts';
import { streamCompanies } from './stream-companies.ts';
import { streamPeople } from './stream-people.ts';
import type { Handlers } from './types.ts';

export const handlers: Handlers = {
  getHealth,
  listProviders,
  getCredits,
  lookupCnpjBatch,
  searchCompanies,
  streamCompanies,
  searchPeople,
  streamPeople,
  hydratePeople,
  enrich,

  research,
  aiColumn,
  listTemplates: notImplemented,
  createTemplate: notImplemented,
  updateTemplate: notImplemented,
  deleteTemplate: notImplemented,
  listCampaigns: notImplemented,
  createCampaign: notImplemented,
  getCampaign: notImplemented,
  updateCampaign: notImplemented,
  updateCadence: notImplemented,
  addProspects: notImplemented,
  listProspects: notImplemented,
  getProspect: notImplemented,
  updateProspect: notImplemented,
  deleteProspect: notImplemented,
  listProspectEvents: notImplemented,
  createSheet: notImplemented,
  upsertSheetRows: notImplemented,
  getSheet: notImplemented,
  deleteSheet: notImplemented,
};
