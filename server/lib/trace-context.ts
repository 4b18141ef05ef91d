/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), the `traceparent` header only:
 * `00-<trace-id: 32 hex>-<parent-id: 16 hex>-<flags: 2 hex>`.
 *
 * A request that carries a valid `traceparent` continues that trace; one without (or with a
 * malformed one, which is ignored, never logged) starts a new trace. Either way the request gets
 * a span id of its own: the request's log lines carry the trace id, the answer carries a
 * `traceparent` naming the request's span, and every call it makes to a provider, the web search
 * or the model carries a child `traceparent` (a new span id per outgoing request, under the
 * request's span). `tracestate` is neither read nor sent: it is the caller's data for its own
 * tracing vendor, and the services prospecta calls are outside that trust.
 *
 * prospecta records no spans itself; the trace id is there so an operator can follow one request
 * through a proxy's traces, prospecta's logs and a provider's or model gateway's records.
 */
import { poolHex as randomHex } from './random-pool.ts';

export interface TraceContext {
  /** 32 lowercase hex digits, never all zeros: the whole trace's id, kept from the caller when it sent one. */
  readonly traceId: string;
  /** 16 lowercase hex digits: this request's span, the parent of every call it makes. */
  readonly spanId: string;
  /** `01` when sampled, else `00` (the caller's decision when it sent one; a started trace is sampled). */
  readonly flags: '00' | '01';
  /**
   * Work nobody waits on (a job's items): its calls to outside services queue behind interactive
   * ones at each service's limiter. It rides on the trace because the trace already reaches every
   * outgoing call (`OutboundClient.call`).
   */
  readonly background?: true;
}

/** Version, trace id, parent id, flags; a future version may append `-…` fields, version 00 may not. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** Longer than any version could need; a longer header is not even matched. */
const MAX_HEADER = 512;

/**
 * The trace id, the caller's span (its parent id) and the sampled flag of a `traceparent`, or null
 * when it is absent or not valid by the specification (unknown version ff, uppercase, all-zero
 * ids, version 00 with anything after the flags, several headers joined into one).
 */
export function parseTraceparent(header: string | undefined): { traceId: string; parentId: string; sampled: boolean } | null {
  if (!header || header.length > MAX_HEADER) return null;
  const match = TRACEPARENT.exec(header);
  if (!match) return null;
  const [, version, traceId, parentId, flags] = match;
  if (version === undefined || traceId === undefined || parentId === undefined || flags === undefined) return null;
  if (version === 'ff' || (version === '00' && header.length !== 55)) return null;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return null;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The request's trace: the caller's when its `traceparent` is valid, else a new one. */
export function traceFrom(header: string | undefined): TraceContext {
  const parent = parseTraceparent(header);
  if (!parent) return startTrace();
  return { traceId: parent.traceId, spanId: newSpanId(), flags: parent.sampled ? '01' : '00' };
}

export function startTrace(): TraceContext {
  let traceId = randomHex(16);
  while (traceId === ZERO_TRACE) traceId = randomHex(16);
  return { traceId, spanId: newSpanId(), flags: '01' };
}

/** The `traceparent` naming this request's own span (the answer's header). */
export function traceparentOf(trace: TraceContext): string {
  return `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
}

/** A `traceparent` for one outgoing request: the same trace, a new span. */
export function childTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${newSpanId()}-${trace.flags}`;
}

function newSpanId(): string {
  let id = randomHex(8);
  while (id === ZERO_SPAN) id = randomHex(8);
  return id;
}

