/**
 * Where the server's log lines go: pino's asynchronous sonic-boom on stdout, handed the lines of
 * one event-loop turn as one write. sonic-boom measures its pending buffer on every write (the
 * byte length of a string that grows until the previous write completes), which under load cost
 * more per access-log line than pino's formatting of it (issue 23). A line waits at most until
 * the end of the turn it was logged in.
 */
/** What `pino.destination()` gives: sonic-boom. */
interface Sink {
  write(data: string): unknown;
  flushSync(): void;
}

export class TurnBatchedDestination {
  private lines: string[] = [];
  private scheduled = false;

  constructor(private readonly out: Sink) {
    // What `process.exit` would otherwise drop: the current turn's lines.
    process.on('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.lines.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  /** Everything logged so far, written before returning (at shutdown). */
  flushSync(): void {
    this.drain();
    this.out.flushSync();
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (this.lines.length === 0) return;
    const batch = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.out.write(batch);
  };
}
