/**
 * Where the server's log lines go: pino's asynchronous sonic-boom on stdout, handed the lines
 * gathered over up to 50 ms as one write. A write to a pipe cost this process about 150 µs of
 * CPU on these machines whatever its size (the syscall on a libuv thread, waking the reader),
 * so it is paid per batch, not per line: written per event-loop turn, a handful of access lines
 * each under load, it took about 7 % of the server's busy time on bench:http (issue 35); in
 * 50 ms batches it is about a microsecond a line. sonic-boom also measures its pending buffer
 * on every write, which cost more per line than pino's formatting of it (issue 23). A line waits
 * at most `delayMs`, less when 64 KiB pile up; every pending line is written before the process
 * exits.
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
    private readonly delayMs = 50,
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
