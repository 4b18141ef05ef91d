/**
 * What a long command shows on stderr while it runs: a progress bar with rows per second when
 * stderr is a terminal, a line per finished file when it is not (a log, a cron job), and every
 * problem as a line of its own either way. Stdout stays the command's JSON result.
 */
import cliProgress from 'cli-progress';
import type { CommandEvent } from './commands.ts';

export function progressDisplay(stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  let bars: cliProgress.MultiBar | undefined;
  let bar: cliProgress.SingleBar | undefined;
  let last: { file: string; filesDone: number } | undefined;
  const log = (line: string) => (bars ? bars.log(`${line}\n`) : stream.write(`${line}\n`));

  return {
    notify(event: CommandEvent): void {
      if ('problem' in event) {
        const { file, line, message } = event.problem;
        log(`problem: ${file}${line ? ` line ${line}` : ''}: ${message}`);
        return;
      }
      const p = event.progress;
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      const payload = {
        phase: p.phase,
        file: p.file,
        rows: p.rows.toLocaleString('en'),
        rate: Math.round(p.rows / seconds).toLocaleString('en'),
        establishments: p.establishments.toLocaleString('en'),
      };
      if (!stream.isTTY) {
        if (last && p.filesDone > last.filesDone) {
          log(`${last.file} done: ${payload.rows} rows, ${payload.rate} rows/s, ${payload.establishments} establishments`);
        }
        last = { file: p.file, filesDone: p.filesDone };
        return;
      }
      if (!bars) {
        bars = new cliProgress.MultiBar(
          {
            stream,
            format: '{phase} |{bar}| {value}/{total} files | {rows} rows, {rate} rows/s | {establishments} establishments | {file}',
            hideCursor: true,
            clearOnComplete: false,
          },
          cliProgress.Presets.shades_classic,
        );
        bar = bars.create(p.files, p.filesDone, payload);
      }
      bar!.update(p.filesDone, payload);
    },
    stop(): void {
      bars?.stop();
    },
  };
}
