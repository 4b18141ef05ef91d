/** A pino logger whose lines a test can read: to check what was logged, and what never was. */
import pino, { type Logger } from 'pino';

export interface CapturedLog {
  log: Logger;
  /** Every line so far, as written. */
  text(): string;
  /** Every line so far, parsed. */
  lines(): Array<Record<string, unknown>>;
}

export function captureLog(level = 'debug'): CapturedLog {
  const written: string[] = [];
  const log = pino({ level }, { write: (line: string) => void written.push(line) });
  return {
    log,
    text: () => written.join(''),
    lines: () => written.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
