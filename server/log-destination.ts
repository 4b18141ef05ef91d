/**
 * Where the server's log lines go: pino's asynchronous sonic-boom on stdout, handed the lines
 * gathered over a few milliseconds as one write. sonic-boom measures its pending buffer on every
 * write (the byte length of a string that grows until the previous write completes), which under
 * load cost more per access-log line than pino's formatting of it (issue 23); and a write per
 * event-loop turn still took about 7 % of the server's busy time on bench:http, at a
 * handful of requests per turn (issue 35). A line waits at most `delayMs`, or less when lines
 * pile up; every pending line is written before the process exits.
 */
/** What `pino.destination()` gives: sonic-boom. */
interface Sink {
  write(data: string): unknown;
  flushSync(): void;
}

/** Pending characters that are written at once rather than waiting for the timer. */
const MAX_PENDING = 64 * 1024;

export class BatchedDestination {
  private lines: string[] = [];
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: Sink,
    private readonly delayMs = 10,
  ) {
    // What `process.exit` would otherwise drop: the lines still waiting.
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.lines.push(line);
    this.pending += line.length;
    if (this.pending >= MAX_PENDING) this.drain();
    else if (!this.timer) this.timer = setTimeout(this.drain, this.delayMs).unref();
  }

  /** Everything logged so far, written before returning (at shutdown). */
  flushSync(): void {
    this.drain();
    this.out.flushSync();
  }

  private readonly drain = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const batch = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.pending = 0;
    this.out.write(batch);
  };
}
