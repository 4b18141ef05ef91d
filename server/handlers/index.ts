/**
 * Every operation id mapped to its handler. The `Handlers` type makes the compiler reject a
 * registry entry without a handler.
 */
import { aiColumn } from './ai-column.ts';
import { enrich } from './enrich.ts';
import { getCredits } from './get-credits.ts';
import { getHealth } from './get-health.ts';
import { hydratePeople } from './hydrate-people.ts';
import { listProviders } from './list-providers.ts';
import { lookupCnpjBatch } from './lookup-cnpj-batch.ts';
import { research } from './research.ts';
import { searchCompanies } from './search-companies.ts';
import { searchPeople } from './search-people.ts';
import { streamCompanies } from './stream-companies.ts';
import { streamPeople } from './stream-people.ts';
import { addProspects, createCampaign, getCampaign, listCampaigns, updateCadence, updateCampaign } from './campaigns.ts';
import { deleteProspect, getProspect, listProspectEvents, listProspects, updateProspect } from './prospects.ts';
import { createSheet, deleteSheet, getSheet, upsertSheetRows } from './sheets.ts';
import { createTemplate, deleteTemplate, listTemplates, updateTemplate } from './templates.ts';
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
  listTemplates,
  createTemplate,
  updateTemplate,
  deleteTemplate,
  listCampaigns,
  createCampaign,
  getCampaign,
  updateCampaign,
  updateCadence,
  addProspects,
  listProspects,
  getProspect,
  updateProspect,
  deleteProspect,
  listProspectEvents,
  createSheet,
  upsertSheetRows,
  getSheet,
  deleteSheet,
};
