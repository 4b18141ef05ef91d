/**
 * The domain's repositories and clients, built once at start-up (bootstrap.ts). No handler reads
 * them as a bag: server/start/handlers.ts gives each area's factory the ones it uses. What the bindings
 * keep of their own (dashboard sessions and sign-in, the agent's conversations, the rate
 * limiter) is built beside these by bootstrap.ts.
 */
import { stillActingOf, type StillActing } from '../auth/still-acting.ts';
import type { Logger } from 'pino';
import { aiCacheIndexes, AiColumns } from '../ai/ai-column.ts';
import { aiUsageIndexes, type Llm } from '../ai/llm.ts';
import type { WebSearch } from '../ai/web-search.ts';
import { AccessTokens } from '../auth/access-tokens.ts';
import { Credentials, type OAuth } from '../auth/credentials.ts';
import { ApiKeys, apiKeyIndexes } from '../auth/keys.ts';
import { memberIndexes, Members } from '../auth/members.ts';
import { Subjects } from '../auth/subjects.ts';
import type { Config } from '../config.ts';
import { Credits, ledgerIndexes } from '../credits/ledger.ts';
import { allowanceIndexes, DailyAllowances } from '../credits/allowance.ts';
import { Payment } from '../credits/payment.ts';
import type { Clock } from '../outbound/clock.ts';
import { jobIndexes, Jobs } from '../jobs/jobs.ts';
import { JobRunner } from '../jobs/runner.ts';
import { Exporter } from '../exports/exporter.ts';
import { webhookIndexes, Webhooks } from '../jobs/webhooks.ts';
import { Providers } from '../providers/providers.ts';
import { providerSettings } from '../providers/settings.ts';
import { providerKeyIndexes, type WorkspaceProviderKeys } from '../providers/workspace-keys.ts';
import type { BrasilApiSource } from '../providers/brasilapi-client.ts';
import { People, peopleIndexes } from '../people/people.ts';
import { Companies, companyIndexes } from '../companies/companies.ts';
import { Campaigns, campaignIndexes } from '../outreach/campaigns.ts';
import { MessageWriter } from '../outreach/message-writer.ts';
import { Prospects, prospectIndexes } from '../outreach/prospects.ts';
import { Sheets, sheetIndexes } from '../outreach/sheets.ts';
import { Templates, templateIndexes } from '../outreach/templates.ts';
import type { IndexDeclaration, Store } from '../store/port.ts';
import { Workspaces, workspaceIndexes } from '../credits/workspaces.ts';
import { SearchCursors, searchCursorIndexes } from '../companies/search-cursors.ts';
import { EnrichMemory, enrichMemoryIndexes } from '../enrich/memory.ts';
import { ChangeHistory, changeIndexes } from '../companies/changes/change-history.ts';
import { WatchDispatcher } from '../watches/dispatcher.ts';
import { Watches, watchIndexes } from '../watches/watches.ts';

export interface Services {
  config: Config;
  store: Store;
  log: Logger;
  workspaces: Workspaces;
  keys: ApiKeys;
  /** Which workspace each OAuth subject acts for. */
  members: Members;
  /** OAuth access tokens and their subjects; null unless OAUTH_ISSUER is set. */
  oauth: OAuth | null;
  /** Bearer credential → principal: API keys, and tokens when `oauth` is set. */
  credentials: Credentials;
  /** Whether a credential kept for later work (a job, a chat with the agent) may still act, read from the store. */
  stillActing: StillActing;
  credits: Credits;
  /** Every 402: the plan gate, charges, budgets. */
  payment: Payment;
  companies: Companies;
  /** Where each search page left off (`cursor` / `nextCursor`). */
  searchCursors: SearchCursors;
  /** Answers CNPJ lookups the imported registry lacks; null unless BRASILAPI_ENABLED. */
  remoteCompanies: BrasilApiSource | null;
  /** The data providers, throttled, with each workspace's own keys. */
  providers: Providers;
  providerKeys: WorkspaceProviderKeys;
  /** What enrichments found, per workspace, given again within `maxAge`. */
  enrichMemory: EnrichMemory;
  people: People;
  /** The language model; null until LLM_BASE_URL and LLM_MODEL are set (AI answers 503). */
  llm: Llm | null;
  aiColumns: AiColumns;
  /** Web search for research; null until SEARXNG_URL or BRAVE_SEARCH_API_KEY is set. */
  webSearch: WebSearch | null;
  templates: Templates;
  sheets: Sheets;
  campaigns: Campaigns;
  prospects: Prospects;
  messageWriter: MessageWriter;
  /** Background jobs, their webhook deliveries, and this process's runner (started by createApp). */
  jobs: Jobs;
  webhooks: Webhooks;
  /** Writes export jobs' files under DATA_DIR/exports. */
  exporter: Exporter;
  /** The registry's changes between imported releases (the feed, the watches). */
  changeHistory: ChangeHistory;
  watches: Watches;
  jobRunner: JobRunner;
  version: string;
}

/** Every index the domain's repositories declare; created at start-up on either store, with the bindings' own (bootstrap.ts). */
export const indexDeclarations: IndexDeclaration[] = [
  ...workspaceIndexes,
  ...apiKeyIndexes,
  ...memberIndexes,
  ...ledgerIndexes,
  ...companyIndexes,
  ...changeIndexes,
  ...watchIndexes,
  ...providerKeyIndexes,
  ...peopleIndexes,
  ...aiUsageIndexes,
  ...aiCacheIndexes,
  ...templateIndexes,
  ...sheetIndexes,
  ...campaignIndexes,
  ...prospectIndexes,
  ...allowanceIndexes,
  ...jobIndexes,
  ...webhookIndexes,
  ...searchCursorIndexes,
  ...enrichMemoryIndexes,
];

export function createServices(deps: {
  config: Config;
  store: Store;
  log: Logger;
  remoteCompanies: BrasilApiSource | null;
  providerKeys: WorkspaceProviderKeys;
  llm: Llm | null;
  webSearch: WebSearch | null;
  version: string;
  /** What provider calls wait on. @default the system's */
  clock?: Clock;
  /** The time jobs read (leases, retention). @default Date.now */
  jobsNow?: () => number;
}): Services {
  const workspaces = new Workspaces(deps.store);
  const credits = new Credits(deps.store, workspaces, (err) => deps.log.warn({ err }, 'clearing a recorded credit movement from its outbox failed'));
  const companies = new Companies(deps.store);
  const keys = new ApiKeys(deps.store, deps.config.keyCacheSeconds * 1000);
  const members = new Members(deps.store, deps.config.keyCacheSeconds * 1000);
  const oauth = oauthOf(deps.config, deps.log, { members, workspaces, credits });
  const jobs = new Jobs(deps.store, deps.jobsNow);
  const exporter = new Exporter({ jobs, companies, credits, dataDir: deps.config.dataDir, log: deps.log });
  const { pollMs, concurrency, webhookTimeoutMs, webhookAllowPrivate } = deps.config.jobs;
  const changeHistory = new ChangeHistory(deps.store, companies);
  const watches = new Watches(deps.store);
  const payment = new Payment(credits, workspaces, new DailyAllowances(deps.store));
  const webhooks = new Webhooks(deps.store, { timeoutMs: webhookTimeoutMs, allowPrivate: webhookAllowPrivate, now: Date.now, log: deps.log });
  const stillActing = stillActingOf({ keys, members });
  return {
    ...deps,
    workspaces,
    keys,
    members,
    oauth,
    credentials: new Credentials(keys, oauth),
    stillActing,
    credits,
    payment,
    companies,
    searchCursors: new SearchCursors(deps.store),
    enrichMemory: new EnrichMemory(deps.store),
    providers: new Providers({
      settings: providerSettings(deps.config.env),
      redisUrl: deps.config.redisUrl,
      maxPauseMs: deps.config.providerMaxPauseSeconds * 1000,
      log: deps.log,
      keys: deps.providerKeys,
      lookups: { companies, remoteCompanies: deps.remoteCompanies },
      clock: deps.clock,
    }),
    people: new People(deps.store),
    aiColumns: new AiColumns(deps.store, deps.llm),
    templates: new Templates(deps.store),
    sheets: new Sheets(deps.store),
    campaigns: new Campaigns(deps.store),
    prospects: new Prospects(deps.store),
    messageWriter: new MessageWriter(deps.llm),
    jobs,
    webhooks,
    exporter,
    changeHistory,
    watches,
    jobRunner: new JobRunner({
      jobs,
      webhooks,
      exporter,
      log: deps.log,
      pollMs,
      concurrency,
      exclusive: deps.store.kind === 'embedded',
      stillActing,
      requirePlan: (workspaceId) => payment.requirePlan(workspaceId),
      watches: new WatchDispatcher({
        store: deps.store,
        watches,
        history: changeHistory,
        companies,
        credits,
        payment,
        webhooks,
        now: deps.jobsNow ?? Date.now,
        log: deps.log,
      }),
    }),
  };
}

function oauthOf(config: Config, log: Logger, deps: { members: Members; workspaces: Workspaces; credits: Credits }): OAuth | null {
  const { issuer, audience, jwksUrl, autoSignup, fetchTimeoutMs } = config.oauth;
  if (!issuer) return null;
  return {
    tokens: new AccessTokens({ issuer, audience, jwksUrl, fetchTimeoutMs, log }),
    subjects: new Subjects({ ...deps, log }, autoSignup),
  };
}
