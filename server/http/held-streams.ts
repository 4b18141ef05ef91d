/**
 * Streams held in memory so a standard server-sent-events client can come back without paying
 * again. Every event a stream sends is kept (already written as SSE text, with its `id:` of
 * `<streamId>:<seq>`) for as long as the stream runs and `keepMs` after its end. A client that
 * reconnects with `Last-Event-ID` gets the events after that one, then the rest as they come; a
 * stream with nothing more to send answers 204 No Content, which ends an EventSource's
 * reconnection. Nothing is ever run again for a reconnection.
 *
 * A stream pulls its handler's events only while a client reads it. When its last client leaves,
 * the handler is left paused (a handler charges each page as it produces it, so nothing more is
 * charged) for `graceMs`; a client that comes back in that time resumes it, otherwise it is
 * stopped (its signal aborted, its iterator closed) and ends `stopped`.
 *
 * Held per process: another instance, or a stream forgotten past the limits, answers a reconnect
 * with 204 and `Stream-Status: unknown` (see docs/api.md, "Streams").
 */
import type { StreamEvent } from '../invocation/outcome.ts';

export interface HeldStreamLimits {
  /** How long a stream whose clients all left stays paused, waiting for one to come back. */
  graceMs: number;
  /** How long an ended stream's events stay held after its end. */
  keepMs: number;
  /** Streams held per workspace: past it, the oldest ended one is forgotten (a running one never is). */
  perWorkspace: number;
  /** Bytes of events held in all: past it, ended streams are forgotten, oldest first. */
  maxBytes: number;
}

export const DEFAULT_STREAM_LIMITS: HeldStreamLimits = {
  graceMs: 30_000,
  keepMs: 5 * 60_000,
  perWorkspace: 20,
  maxBytes: 64 * 1024 * 1024,
};

/** The `retry:` hint every stream opens with: how long a client waits before reconnecting. */
export const RETRY_MS = 2_000;

/**
 * Why a reconnection has nothing to send (`Stream-Status` of its 204): the stream sent everything
 * (`finished`), was stopped before its end (`stopped`), or is not held here (`unknown`: never
 * existed, another workspace's or operation's, another instance's, or forgotten).
 */
export type StreamStatus = 'finished' | 'stopped' | 'unknown';

type End = Exclude<StreamStatus, 'unknown'>;

export class HeldStream {
  /** Each event as written on the wire; event `seq` is at index `seq - 1`. */
  readonly events: string[] = [];
  end: End | null = null;
  endedAt = 0;
  bytes = 0;
  private readers = 0;
  private wakeReaders: Array<() => void> = [];
  private wakePump: (() => void) | null = null;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly key: string,
    readonly workspaceId: string | null,
    readonly streamId: string,
    private readonly iterator: AsyncIterator<StreamEvent>,
    private readonly abort: AbortController,
    private readonly formatError: (err: unknown) => StreamEvent,
    private readonly graceMs: number,
    private readonly onGrowth: (stream: HeldStream, bytes: number) => void,
    private readonly onEnd: (stream: HeldStream) => void,
  ) {}

  /** Adds an event to the log (the stream's first one is added by its opener). */
  push(event: StreamEvent): void {
    const seq = this.events.length + 1;
    const text = `id: ${this.streamId}:${seq}\nevent: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
    this.events.push(text);
    this.bytes += text.length;
    this.onGrowth(this, text.length);
    this.notify();
  }

  /** A reader joins: the handler is pulled while at least one reads. Returns its leaving. */
  attach(): () => void {
    this.readers++;
    clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.wakePump?.();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.readers > 0 || this.end) return;
      if (this.graceMs <= 0) return this.stop();
      this.graceTimer = setTimeout(() => this.stop(), this.graceMs);
      this.graceTimer.unref?.();
    };
  }

  /** Resolves at the next event or at the end. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.wakeReaders.push(resolve));
  }

  /** Pulls the handler's events into the log while someone reads, until its end or its stop. */
  async pump(): Promise<void> {
    while (!this.end) {
      if (this.readers === 0) {
        await new Promise<void>((resolve) => (this.wakePump = resolve));
        this.wakePump = null;
        continue;
      }
      let next: IteratorResult<StreamEvent>;
      try {
        next = await this.iterator.next();
      } catch (err) {
        if (this.end) return;
        this.push(this.formatError(err));
        this.finish('finished');
        return;
      }
      if (this.end) return;
      if (next.done) {
        this.finish('finished');
        return;
      }
      this.push(next.value);
    }
  }

  /** Nobody came back in time: the handler's work is cancelled and its iterator closed. */
  stop(): void {
    if (this.end) return;
    this.abort.abort();
    void this.iterator.return?.().catch(() => undefined);
    this.finish('stopped');
  }

  private finish(end: End): void {
    this.end = end;
    this.endedAt = Date.now();
    clearTimeout(this.graceTimer);
    this.wakePump?.();
    this.notify();
    this.onEnd(this);
  }

  private notify(): void {
    const waiting = this.wakeReaders;
    this.wakeReaders = [];
    for (const wake of waiting) wake();
  }
}

/** The streams this process holds, by workspace, operation and stream id. */
export class HeldStreams {
  private readonly streams = new Map<string, HeldStream>();
  private bytes = 0;
  readonly limits: HeldStreamLimits;

  constructor(limits: Partial<HeldStreamLimits> = {}) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
  }

  /**
   * Holds a stream that has produced its first event, and starts pulling the rest. A stream
   * without a workspace (none today) is sent but not held.
   */
  start(
    workspaceId: string | null,
    operationId: string,
    streamId: string,
    iterator: AsyncIterator<StreamEvent>,
    abort: AbortController,
    first: IteratorResult<StreamEvent>,
    formatError: (err: unknown) => StreamEvent,
    /** false: stopped as soon as its last client leaves (a handler that does not wait to be read). */
    pausable = true,
  ): HeldStream {
    const key = keyOf(workspaceId, operationId, streamId);
    const stream = new HeldStream(
      key,
      workspaceId,
      streamId,
      iterator,
      abort,
      formatError,
      pausable ? this.limits.graceMs : 0,
      (grown, bytes) => this.grew(grown, bytes),
      (ended) => this.ended(ended),
    );
    // A replay (Idempotency-Key) reuses its stream's id: the original, if still held, keeps the place.
    if (workspaceId !== null && !this.streams.has(key) && this.makeRoomIn(workspaceId)) this.streams.set(key, stream);
    if (first.done) stream.stop();
    else stream.push(first.value);
    void stream.pump();
    return stream;
  }

  /**
   * The stream a `Last-Event-ID` names, for this workspace and operation, with the number of
   * events its client already has; or null when it is not held here.
   */
  find(workspaceId: string, operationId: string, lastEventId: string): { stream: HeldStream; after: number } | null {
    const match = /^([0-9a-f-]{36}):([1-9][0-9]{0,8})$/.exec(lastEventId.trim());
    if (!match) return null;
    const stream = this.streams.get(keyOf(workspaceId, operationId, match[1]!));
    const after = Number(match[2]);
    if (!stream || after > stream.events.length) return null;
    return { stream, after };
  }

  /** How many streams are held (for tests of the limits). */
  get size(): number {
    return this.streams.size;
  }

  private grew(stream: HeldStream, bytes: number): void {
    if (this.streams.get(stream.key) !== stream) return;
    this.bytes += bytes;
    if (this.bytes <= this.limits.maxBytes) return;
    for (const stream of this.endedOldestFirst()) {
      if (this.bytes <= this.limits.maxBytes) break;
      this.forget(stream);
    }
  }

  private ended(stream: HeldStream): void {
    if (!this.streams.has(stream.key)) return;
    setTimeout(() => this.forget(stream), this.limits.keepMs).unref?.();
  }

  /** Whether a new stream of this workspace may be held, forgetting its oldest ended one if needed. */
  private makeRoomIn(workspaceId: string): boolean {
    const mine = [...this.streams.values()].filter((s) => s.workspaceId === workspaceId);
    if (mine.length < this.limits.perWorkspace) return true;
    const oldest = this.endedOldestFirst(mine)[0];
    if (!oldest) return false;
    this.forget(oldest);
    return true;
  }

  private endedOldestFirst(streams: Iterable<HeldStream> = this.streams.values()): HeldStream[] {
    return [...streams].filter((s) => s.end).sort((a, b) => a.endedAt - b.endedAt);
  }

  private forget(stream: HeldStream): void {
    if (this.streams.get(stream.key) !== stream) return;
    this.streams.delete(stream.key);
    this.bytes -= stream.bytes;
  }
}

function keyOf(workspaceId: string | null, operationId: string, streamId: string): string {
  return `${workspaceId ?? '-'} ${operationId} ${streamId}`;
}
