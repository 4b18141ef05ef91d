/**
 * Every Prometheus series prospecta exports, in one registry, each behind a typed function that
 * the code calls where the event happens (the request's end, a debit, a provider's answer, a
 * store writes…). No other module names a series or a label, so the set stays bounded and
 * documented (docs/operations.md, "Metrics"): label values are operation ids, provider ids,
 * bindings, outcomes and status codes, never workspace ids, paths, keys or personal data.
 *
 * The series are always counted (a counter is a few nanoseconds); `GET /metrics` (http/metrics.ts)
 * only shows them, when METRICS_TOKEN is set, and the default process metrics are started then.
 * Labelled children are made on first use and kept in small maps, so counting an event allocates
 * nothing after the first of its kind; a series appears once its first event has happened.
 */
import type Bottleneck from 'bottleneck';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OperationId } from '../../shared/operations/index.ts';
import { ServiceError } from './errors.ts';

export const registry = new Registry();

/** What a request is counted under: its registry operation, or one of the few routes outside it. */
export type RouteLabel = OperationId | 'mcp' | 'openapi' | 'resource_metadata' | 'server_card' | 'metrics' | 'dashboard' | 'docs' | 'unmatched';

/** How an operation was reached. */
export type Binding = 'http' | 'mcp' | 'agent' | 'job';

/**
 * How one attempt at an outside service ended:
 * `ok`; `rate_limited` (429); `failed` (5xx, lost connection, garbage); `timeout`; `rejected` (an
 * answer another attempt would not change: a refused key, a content filter, a 4xx); `aborted`
 * (our caller left); `skipped` (never sent: circuit breaker open, no turn in the limiter in time,
 * or a pause a 429 asked for longer than the caller would wait).
 */
export type CallOutcome = 'ok' | 'rate_limited' | 'failed' | 'timeout' | 'rejected' | 'aborted' | 'skipped';

const SECONDS_HTTP = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const SECONDS_OUTBOUND = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const SECONDS_FSYNC = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const registers = [registry];

/** A labelled child (or anything else) made once per key: labelling anew costs a hash of the labels at every call. */
function once<K, V>(made: Map<K, V>, key: K, make: () => V): V {
  let value = made.get(key);
  if (value === undefined) made.set(key, (value = make()));
  return value;
}

// ---- HTTP ---------------------------------------------------------------------------------

const httpRequests = new Counter({
  name: 'prospecta_http_requests_total',
  help: 'HTTP requests answered, by operation id (or mcp, openapi, resource_metadata, metrics, dashboard, docs, unmatched) and status code.',
  labelNames: ['operation', 'status'] as const,
  registers,
});
const httpDuration = new Histogram({
  name: 'prospecta_http_request_duration_seconds',
  help: 'Time from a request\'s arrival to its answer being handed to Node (a stream: to its first event), by operation.',
  labelNames: ['operation'] as const,
  buckets: SECONDS_HTTP,
  registers,
});
const sseOpen = new Gauge({
  name: 'prospecta_sse_streams_open',
  help: 'Event streams (text/event-stream answers, MCP progress included) open now, by operation.',
  labelNames: ['operation'] as const,
  registers,
});

const requestsBy = new Map<string, Map<number, Counter.Internal>>();
const durationBy = new Map<string, Histogram.Internal<'operation'>>();

/** One answered request (the access log's moment). */
export function httpRequest(operation: RouteLabel, status: number, seconds: number): void {
  const byStatus = once(requestsBy, operation, () => new Map<number, Counter.Internal>());
  once(byStatus, status, () => httpRequests.labels(operation, String(status))).inc();
  once(durationBy, operation, () => httpDuration.labels(operation)).observe(seconds);
}

/** An event stream started; call the result when it ends. */
export function streamOpened(operation: RouteLabel): () => void {
  sseOpen.labels(operation).inc();
  let open = true;
  return () => {
    if (open) sseOpen.labels(operation).dec();
    open = false;
  };
}

// ---- Operations, whatever the binding --------------------------------------------------------

const operationCalls = new Counter({
  name: 'prospecta_operation_calls_total',
  help: 'Operations run by the pipeline, by operation id, binding (http, mcp, agent, job) and outcome (ok, the error code, or aborted: the caller left). A stream counts when it starts.',
  labelNames: ['operation', 'binding', 'outcome'] as const,
  registers,
});
const creditsCharged = new Counter({
  name: 'prospecta_credits_charged_total',
  help: 'Credits debited from workspaces, by operation.',
  labelNames: ['operation'] as const,
  registers,
});

const callsBy = new Map<string, Counter.Internal>();
const creditsBy = new Map<string, Counter.Internal>();

/** Counts the call once `outcome` settles, and gives `outcome` back untouched. */
export function operationCall<T>(operation: OperationId, binding: Binding, outcome: Promise<T>): Promise<T> {
  outcome.then(
    () => countCall(operation, binding, 'ok'),
    (err: unknown) => countCall(operation, binding, outcomeOf(err)),
  );
  return outcome;
}

/** An error's code; a caller gone (the abort's reason) is no error of ours; anything else is a 500. */
function outcomeOf(err: unknown): string {
  if (err instanceof ServiceError) return err.code;
  return (err as { name?: unknown } | null)?.name === 'AbortError' ? 'aborted' : 'internal_error';
}

function countCall(operation: OperationId, binding: Binding, outcome: string): void {
  once(callsBy, `${operation} ${binding} ${outcome}`, () => operationCalls.labels(operation, binding, outcome)).inc();
}

export function creditsDebited(operation: OperationId, amount: number): void {
  if (amount <= 0) return;
  once(creditsBy, operation, () => creditsCharged.labels(operation)).inc(amount);
}

// ---- Outside services: providers, BrasilAPI, web search, the model -------------------------------

const providerCalls = new Counter({
  name: 'prospecta_provider_calls_total',
  help: 'Attempts at an outside service (data providers by id, brasilapi, llm, searxng, brave), retries included, by outcome.',
  labelNames: ['provider', 'outcome'] as const,
  registers,
});
const providerDuration = new Histogram({
  name: 'prospecta_provider_call_duration_seconds',
  help: 'Time of one attempt at an outside service, from sending to its answer read (not the wait for a turn), by provider.',
  labelNames: ['provider'] as const,
  buckets: SECONDS_OUTBOUND,
  registers,
});
const llmTokens = new Counter({
  name: 'prospecta_llm_tokens_total',
  help: 'Model tokens used, by kind (prompt, completion), as the model reported them (estimated when it did not).',
  labelNames: ['kind'] as const,
  registers,
});

/** What the gauges below read at each scrape: every live limiter, with its service and breaker. */
interface Watched {
  provider: string;
  limiter: Bottleneck;
  breaker?: { readonly open: boolean };
}
const watched = new Set<Watched>();

new Gauge({
  name: 'prospecta_provider_queue_depth',
  help: 'Calls waiting for a turn in this process\'s limiters of an outside service (a workspace\'s own key has its own limiter, summed here).',
  labelNames: ['provider'] as const,
  registers,
  collect() {
    this.reset();
    for (const w of watched) this.inc({ provider: w.provider }, w.limiter.counts().QUEUED ?? 0);
  },
});
new Gauge({
  name: 'prospecta_provider_calls_in_flight',
  help: 'Calls to an outside service running now in this process.',
  labelNames: ['provider'] as const,
  registers,
  collect() {
    this.reset();
    for (const w of watched) {
      const counts = w.limiter.counts();
      this.inc({ provider: w.provider }, (counts.RUNNING ?? 0) + (counts.EXECUTING ?? 0));
    }
  },
});
new Gauge({
  name: 'prospecta_provider_circuit_open',
  help: 'Circuit breakers of an outside service that are open (calls skipped, or one trial call deciding): 0 when every one is closed.',
  labelNames: ['provider'] as const,
  registers,
  collect() {
    this.reset();
    for (const w of watched) if (w.breaker) this.inc({ provider: w.provider }, w.breaker.open ? 1 : 0);
  },
});

/** The counters of one outside service, labelled once. */
export interface ServiceMeter {
  /** One attempt ended; `seconds` when it was actually sent. */
  attempt(outcome: CallOutcome, seconds?: number): void;
}

const meters = new Map<string, ServiceMeter>();

export function serviceMeter(provider: string): ServiceMeter {
  return once(meters, provider, () => {
    const outcomes = new Map<CallOutcome, Counter.Internal>();
    const duration = providerDuration.labels(provider);
    return {
      attempt(outcome, seconds) {
        once(outcomes, outcome, () => providerCalls.labels(provider, outcome)).inc();
        if (seconds !== undefined) duration.observe(seconds);
      },
    };
  });
}

/** Shows a limiter (and its breaker) in the queue, in-flight and circuit gauges until it is closed. */
export function watchLimiter(provider: string, limiter: Bottleneck, breaker?: { readonly open: boolean }): void {
  watched.add({ provider, limiter, ...(breaker ? { breaker } : {}) });
}

export function forgetLimiter(limiter: Bottleneck): void {
  for (const w of watched) if (w.limiter === limiter) watched.delete(w);
}

export function llmTokensUsed(prompt: number, completion: number): void {
  llmTokens.labels('prompt').inc(prompt);
  llmTokens.labels('completion').inc(completion);
}

// ---- The embedded store --------------------------------------------------------------------

const storeWrite = new Histogram({
  name: 'prospecta_store_write_seconds',
  help: 'Embedded store: one write transaction, from its start to its commit (a WAL append).',
  buckets: SECONDS_FSYNC,
  registers,
});

const stores = new Set<{ databaseBytes(): number }>();
new Gauge({
  name: 'prospecta_store_database_bytes',
  help: 'Embedded store: the SQLite database\'s size (its pages; the WAL beside it aside).',
  registers,
  collect() {
    let bytes = 0;
    for (const store of stores) bytes += store.databaseBytes();
    this.set(bytes);
  },
});

export function storeWritten(seconds: number): void {
  storeWrite.observe(seconds);
}

/** An open embedded store, shown in the size gauge; call the result when it closes. */
export function watchStore(store: { databaseBytes(): number }): () => void {
  stores.add(store);
  return () => stores.delete(store);
}

// ---- The registry import (in the server when a command reaches it through the control socket) --

const importRunning = new Gauge({
  name: 'prospecta_import_running',
  help: 'Registry imports running in this process.',
  registers,
});
const importProgress = new Gauge({
  name: 'prospecta_import_progress_ratio',
  help: 'The running registry import\'s files finished, as a share of its files (0 to 1); the last import\'s once it ended.',
  registers,
});
const importRows = new Counter({
  name: 'prospecta_import_rows_total',
  help: 'Rows of registry files read by imports (its rate is the import\'s reading rate).',
  registers,
});
const importEstablishments = new Counter({
  name: 'prospecta_import_establishments_total',
  help: 'Establishments written by registry imports (rate(...[1m]) is the import rate).',
  registers,
});

/** What the importer reports as it goes (`ImportProgress`): totals for the run so far. */
export interface ImportCounts {
  filesDone: number;
  files: number;
  rows: number;
  establishments: number;
}

/** A registry import starts; report its progress to the result, and call `end` once it stops. */
export function importStarted(): { progress(counts: ImportCounts): void; end(): void } {
  importRunning.inc();
  importProgress.set(0);
  let rows = 0;
  let establishments = 0;
  let ended = false;
  return {
    progress(counts) {
      importRows.inc(Math.max(0, counts.rows - rows));
      importEstablishments.inc(Math.max(0, counts.establishments - establishments));
      rows = Math.max(rows, counts.rows);
      establishments = Math.max(establishments, counts.establishments);
      importProgress.set(counts.files > 0 ? counts.filesDone / counts.files : 0);
    },
    end() {
      if (!ended) importRunning.dec();
      ended = true;
    },
  };
}

// ---- Process ---------------------------------------------------------------------------------

let defaultsStarted = false;

/**
 * The default process metrics (CPU, memory, heap, event-loop lag, GC, handles), with prom-client's
 * standard names. Started with the endpoint: their event-loop monitor and GC observer cost a
 * little, for nobody to read when METRICS_TOKEN is unset.
 */
export function startProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  collectDefaultMetrics({ register: registry });
}
