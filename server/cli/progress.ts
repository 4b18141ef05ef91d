/**
 * What a long command shows on stderr while it runs: a progress bar with rows per second when
 * stderr is a terminal, a line per finished file when it is not (a log, a cron job), and every
 * problem as a line of its own either way. Stdout stays the command's JSON result.
 */
import cliProgress from 'cli-progress';
import type { CommandEvent } from './commands.ts';
import type { DownloadProgress } from '../receita/download/download.ts';

export function progressDisplay(stream: NodeJS.WriteStream = process.stderr) {
  const started = Date.now();
  let bars: cliProgress.MultiBar | undefined;
  let bar: cliProgress.SingleBar | undefined;
  let downloadBar: cliProgress.SingleBar | undefined;
  let last: { file: string; filesDone: number } | undefined;
  let lastChanges = '';
  let lastStep: string | undefined;
  const log = (line: string) => (bars ? bars.log(`${line}\n`) : stream.write(`${line}\n`));

  const mib = (bytes: number) => (bytes / 1048576).toFixed(1);
  /** Downloads: a bar of bytes (files when sizes are unknown) on a terminal, a line per finished file elsewhere. */
  function showDownload(d: DownloadProgress): void {
    if (!stream.isTTY) {
      if (d.finished) {
        log(`${d.finished.name} ${d.finished.how}: ${mib(d.finished.bytes)} MiB (${d.filesDone}/${d.files} files, ${mib(d.bytes)} MiB in all)`);
      }
      return;
    }
    const seconds = Math.max((Date.now() - started) / 1000, 0.001);
    const payload = { file: d.file, files: `${d.filesDone}/${d.files}`, mib: mib(d.bytes), rate: mib(d.bytes / seconds) };
    const byBytes = d.totalBytes !== undefined;
    bars ??= new cliProgress.MultiBar({ stream, hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
    downloadBar ??= bars.create(byBytes ? d.totalBytes! : d.files, 0, payload, {
      format: 'download |{bar}| {files} files | {mib} MiB, {rate} MiB/s | {file}',
    });
    downloadBar.update(byBytes ? d.bytes : d.filesDone, payload);
    if (d.finished) log(`${d.finished.name} ${d.finished.how}: ${mib(d.finished.bytes)} MiB`);
  }

  return {
    notify(event: CommandEvent): void {
      if ('problem' in event) {
        const { file, line, message } = event.problem;
        log(`problem: ${file}${line ? ` line ${line}` : ''}: ${message}`);
        return;
      }
      if ('warning' in event) {
        log(`warning: ${event.warning}`);
        return;
      }
      if ('download' in event) {
        showDownload(event.download);
        return;
      }
      const p = event.progress;
      const seconds = Math.max((Date.now() - started) / 1000, 0.001);
      const payload = {
        phase: p.phase,
        file: p.step ? `${p.file} ${p.step}` : p.file,
        rows: p.rows.toLocaleString('en'),
        rate: Math.round(p.rows / seconds).toLocaleString('en'),
        establishments: p.establishments.toLocaleString('en'),
        // Recorded once the establishments are in: what changed since the release replaced, per kind.
        changes: p.changes ? `changes: ${Object.entries(p.changes).map(([kind, n]) => `${kind} ${n.toLocaleString('en')}`).join(', ') || 'none'}` : '',
      };
      if (!stream.isTTY) {
        if (payload.changes && payload.changes !== lastChanges) log((lastChanges = payload.changes));
        if (last && p.filesDone > last.filesDone) {
          log(`${last.file} done: ${payload.rows} rows, ${payload.rate} rows/s, ${payload.establishments} establishments`);
        }
        last = { file: p.file, filesDone: p.filesDone };
        // The end of a large import takes minutes: each step as it begins, with the time so far.
        if (p.step && p.step !== lastStep) log(`finishing: ${(lastStep = p.step)} (${Math.round(seconds)} s in)`);
        return;
      }
      bars ??= new cliProgress.MultiBar({ stream, hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
      bar ??= bars.create(p.files, p.filesDone, payload, {
        format: '{phase} |{bar}| {value}/{total} files | {rows} rows, {rate} rows/s | {establishments} establishments | {file} {changes}',
      });
      bar!.update(p.filesDone, payload);
    },
    stop(): void {
      bars?.stop();
    },
  };
}
