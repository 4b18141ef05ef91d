/**
 * Every operation id mapped to its handler, built once at start-up: each area's factory is given
 * the repositories and clients its handlers use, and nothing else, so what a handler depends on
 * is written in its factory's signature. The `Handlers` type makes the compiler reject a registry
 * entry without a handler.
 */
import { createAgentHandlers } from '../agent/handlers.ts';
import type { Conversations } from '../agent/conversations.ts';
import { createAiHandlers } from '../ai/handlers.ts';
import { createKeyHandlers } from '../auth/handlers.ts';
import { createCreditHandlers } from '../credits/handlers.ts';
import { createEnrichHandlers } from '../enrich/handlers.ts';
import { createExportHandlers } from '../exports/handlers.ts';
import { createHealthHandlers } from '../health/handlers.ts';
import { createJobHandlers } from '../jobs/handlers.ts';
import { createOutreachHandlers } from '../outreach/handlers.ts';
import { createPeopleHandlers } from '../people/handlers.ts';
import type { Handlers } from '../invocation/handler.ts';
import { createProviderHandlers } from '../providers/handlers.ts';
import { createCompanyHandlers } from '../companies/handlers.ts';
import { createChangeHandlers } from '../companies/changes/handlers.ts';
import { createWatchHandlers } from '../watches/handlers.ts';
import type { Services } from './services.ts';
import { operations } from '../../shared/operations/index.ts';
import { JOB_OPERATIONS } from '../../shared/schemas/jobs.ts';
import { compileValidators } from '../pipeline/validate.ts';

export function createHandlers(s: Services & { conversations: Conversations }): Handlers {
  const { config, companies, providers, searchCursors, enrichMemory: memory, llm } = s;
  return {
    ...createHealthHandlers({ version: s.version, store: s.store, companies }),
    ...createProviderHandlers({ providers, companies, modelConfigured: llm !== null }),
    ...createCreditHandlers({ credits: s.credits, memory }),
    ...createKeyHandlers({ keys: s.keys, members: s.members }),
    ...createCompanyHandlers({ companies, searchCursors, remoteCompanies: s.remoteCompanies, lookupsPerRequest: config.brasilApi.lookupsPerRequest }),
    ...createPeopleHandlers({ people: s.people, companies, providers, searchCursors, memory }),
    ...createEnrichHandlers({ memory, providers }),
    ...createAiHandlers({ llm, webSearch: s.webSearch, aiColumns: s.aiColumns, allowLoopback: config.webAllowLoopback }),
    ...createOutreachHandlers({
      templates: s.templates,
      campaigns: s.campaigns,
      prospects: s.prospects,
      sheets: s.sheets,
      writer: s.messageWriter,
      maxProspects: config.campaignMaxProspects,
    }),
    ...createAgentHandlers({ llm, conversations: s.conversations, payment: s.payment, limits: config.agent, stillActing: s.stillActing }),
    ...createJobHandlers({
      jobs: s.jobs,
      runner: s.jobRunner,
      webhookAllowPrivate: config.jobs.webhookAllowPrivate,
      // Only the operations a job may run; each compiled when a job first names it.
      checkBody: compileValidators(Object.fromEntries(JOB_OPERATIONS.map((id) => [id, operations[id]]))),
    }),
    ...createChangeHandlers({ history: s.changeHistory, companies, searchCursors }),
    ...createWatchHandlers({
      watches: s.watches,
      companies,
      runner: s.jobRunner,
      webhooks: s.webhooks,
      credits: s.credits,
      webhookAllowPrivate: config.jobs.webhookAllowPrivate,
    }),
    ...createExportHandlers({
      jobs: s.jobs,
      companies,
      exporter: s.exporter,
      runner: s.jobRunner,
      webhookAllowPrivate: config.jobs.webhookAllowPrivate,
    }),
  };
}
