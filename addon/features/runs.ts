/**
 * Starting a run over selected rows, and the dependencies every run needs. The entry points wire
 * Apps Script's services in; the tests wire the same adapters over faithful fakes.
 */
import { ProspectaClient } from '../api/client.ts';
import type { HttpPort } from '../api/http.ts';
import { aiColumnProcessor, researchProcessor, type AiColumnOptions, type ResearchOptions } from './ai-columns.ts';
import { cnpjProcessor, type CnpjOptions } from './cnpj-fill.ts';
import { enrichProcessor, type EnrichOptions } from './enrich-rows.ts';
import { newJob, startJob, type Job, type JobDeps, type Processor } from './job.ts';
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
    client,
    http: rt.http,
    sheet: rt.sheet,
    properties: rt.document,
    triggers: rt.triggers,
    lock: rt.lock,
    clock: rt.clock,
    processors: {
      cnpj: cnpjProcessor(),
      enrich: enrichProcessor(),
      aiColumn: aiColumnProcessor(),
      research: researchProcessor(),
    } satisfies { [K in RunKind]: Processor<RunOptions[K], any> },
    ...(rt.budgetMs !== undefined ? { budgetMs: rt.budgetMs } : {}),
  };
}

/** What each kind of run is asked to do. */
export interface RunOptions {
  cnpj: CnpjOptions;
  enrich: EnrichOptions;
  aiColumn: AiColumnOptions;
  research: ResearchOptions;
}
export type RunKind = keyof RunOptions;

/** Rows `first`…`last` of a sheet (the header row excluded): sent now, or as a server job whose results polls write. */
export function startRun<K extends RunKind>(rt: Runtime, kind: K, sheetName: string, first: number, last: number, options: RunOptions[K]): Job {
  const deps = jobDeps(rt);
  if (!deps.lock.tryLock(10_000)) throw new PlainError('Another run is being started in this document; try again in a moment.');
  try {
    return startJob(deps, newJob(rt.document, { kind, sheet: sheetName, first: Math.max(first, 2), last, options }, rt.clock));
  } finally {
    deps.lock.release();
  }
}

/** What a person sees of a run. */
export function describeJob(job: Job): string {
  const t = job.totals;
  const counts = `${t.done} filled, ${t.skipped} skipped, ${t.failed} failed, ${t.credits} credits`;
  if (job.state === 'done') return `Done: ${counts}.`;
  if (job.state === 'stopped') return `Stopped: ${job.error} (${counts}).`;
  if (job.state === 'cancelled') return `Cancelled (${counts}).`;
  const server = job.server;
  const finished = server ? `${server.finished} of ${job.requests} looked up, ${server.credits} credits so far` : '';
  return `${server?.cancelling ? 'Cancelling' : 'Working'}: ${finished}; ${counts} written. Results are written as they finish.`;
}
