/**
 * Starting a run over selected rows, and the dependencies every run needs. The entry points wire
 * Apps Script's services in; the tests wire the same adapters over faithful fakes.
 */
import { ProspectaClient } from '../api/client.ts';
import type { HttpPort } from '../api/http.ts';
import { aiColumnProcessor, researchProcessor, type AiColumnOptions, type ResearchOptions } from './ai-columns.ts';
import { cnpjProcessor } from './cnpj-fill.ts';
import { enrichProcessor, type EnrichOptions } from './enrich-rows.ts';
import { newJob, runJobs, type Job, type JobDeps, type Processor } from './job.ts';
import type { Clock, LockPort, PropertiesPort, SheetPort, TriggerPort } from './ports.ts';
import { PlainError } from './errors.ts';
import { loadSettings, NOT_CONFIGURED } from './settings.ts';

export interface Runtime {
  http: HttpPort;
  user: PropertiesPort;
  document: PropertiesPort;
  sheet(name: string): SheetPort | null;
  triggers: TriggerPort;
  lock: LockPort;
  clock: Clock;
  budgetMs?: number;
}

export class NotConfigured extends PlainError {}

/** The client for the user's settings; NotConfigured, in words for the user, when there are none. */
export function clientOf(rt: Pick<Runtime, 'http' | 'user'>): ProspectaClient {
  const settings = loadSettings(rt.user);
  if (!settings) throw new NotConfigured(NOT_CONFIGURED);
  return new ProspectaClient(rt.http, settings);
}

export function jobDeps(rt: Runtime): JobDeps {
  const client = clientOf(rt);
  return {
    sheet: rt.sheet,
    properties: rt.document,
    triggers: rt.triggers,
    lock: rt.lock,
    clock: rt.clock,
    processors: {
      cnpj: cnpjProcessor(client, rt.http, rt.clock),
      enrich: enrichProcessor(client, rt.http, rt.clock),
      aiColumn: aiColumnProcessor(client, rt.http, rt.clock),
      research: researchProcessor(client, rt.http, rt.clock),
    } satisfies { [K in RunKind]: Processor<RunOptions[K]> },
    ...(rt.budgetMs !== undefined ? { budgetMs: rt.budgetMs } : {}),
  };
}

/** What each kind of run is asked to do. */
export interface RunOptions {
  cnpj: Record<string, never>;
  enrich: EnrichOptions;
  aiColumn: AiColumnOptions;
  research: ResearchOptions;
}
export type RunKind = keyof RunOptions;

/** Rows `first`…`last` of a sheet (the header row excluded), run now and continued by triggers. */
export function startRun<K extends RunKind>(rt: Runtime, kind: K, sheetName: string, first: number, last: number, options: RunOptions[K]): Job {
  const deps = jobDeps(rt);
  const job = newJob(rt.document, { kind, sheet: sheetName, first: Math.max(first, 2), last, options }, rt.clock);
  const ran = runJobs(deps).find((j) => j.id === job.id);
  return ran ?? job;
}

/** What a person sees of a run. */
export function describeJob(job: Job): string {
  const t = job.totals;
  const counts = `${t.done} filled, ${t.skipped} skipped, ${t.failed} failed, ${t.credits} credits`;
  if (job.state === 'done') return `Done: ${counts}.`;
  if (job.state === 'stopped') return `Stopped: ${job.error} (${counts}).`;
  if (job.state === 'cancelled') return `Cancelled (${counts}).`;
  return `Working: row ${job.next} of ${job.last}; ${counts}. It continues by itself in about a minute.`;
}
