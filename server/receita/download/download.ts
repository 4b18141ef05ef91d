/**
 * `prospecta download cnpj`: a release of the Receita's CNPJ open data, and the tax-regime files,
 * into `DIR/YYYY-MM/`, ready for `import cnpj`.
 *
 * The Receita's server is slow, stalls on long streams and refuses many connections, and
 * publishes no checksums. So: a few files at a time; a download that receives nothing for a
 * while, or trickles in too slowly to finish, is cut and resumed with an HTTP Range request
 * where it stopped (a server that ignores the range starts it over); each file is written as `NAME.part` and takes its name only once
 * its size matches the listing (or the server's announced length) and it opens as a zip, so an
 * import never reads half a file; a zip that does not open is downloaded again.
 *
 * These requests do not go through the SSRF guard (server/ai/web): their URLs are the operator's
 * configuration (CNPJ_RELEASES_URL, CNPJ_TAX_REGIMES_URL) and the listing they publish, never a
 * user's input.
 */
import { mkdir, open, rename, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import yauzl from 'yauzl';
import { isPlainFileName, Listing, ListingError, type RemoteFile } from './listing.ts';

export interface DownloadOptions {
  /** The releases' listing (CNPJ_RELEASES_URL). */
  url: string;
  /** The tax-regime files' folder (CNPJ_TAX_REGIMES_URL); skipped when empty. */
  taxRegimesUrl?: string;
  /** `YYYY-MM` or `latest` (default). */
  release?: string;
  /** The release goes to `dir/YYYY-MM/`. */
  dir: string;
  /** Files downloading at once. @default 3 */
  parallel?: number;
  /** A download that receives nothing this long is cut and resumed. @default 60 s */
  stallMs?: number;
  /** Tries per file (stalls, drops, bad zips). @default 8 */
  attempts?: number;
  /** Pause before a retry, doubled each time. @default 1 s */
  backoffMs?: number;
  onProgress?: (progress: DownloadProgress) => void;
  /** A warning that does not stop the download (the tax-regime folder could not be listed). */
  onWarning?: (message: string) => void;
  fetch?: typeof fetch;
}

export interface DownloadProgress {
  file: string;
  /** Bytes on disk, all files together, and the total when every size is known. */
  bytes: number;
  totalBytes: number | undefined;
  filesDone: number;
  files: number;
  /** A file just finished, and how. */
  finished?: FileOutcome;
}

export interface FileOutcome {
  name: string;
  bytes: number;
  /** `present`: already here whole; `resumed`: continued a partial download at least once. */
  how: 'downloaded' | 'resumed' | 'present';
}

export interface DownloadSummary {
  release: string;
  /** Where the files are: give it to `import cnpj --dir`. */
  dir: string;
  files: number;
  taxRegimeFiles: number;
  bytes: number;
  downloaded: number;
  resumed: number;
  present: number;
  warnings: string[];
}

export class DownloadError extends Error {}

/** Slower than this over a whole `stallMs`, a download is cut and resumed: at 16 KiB/s, a 1.3 GB zip would take a day. */
const MIN_BYTES_PER_SECOND = 16 * 1024;

/** A file the server says it does not have: no retry will help. */
class MissingFile extends Error {}

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export async function downloadRelease(options: DownloadOptions): Promise<DownloadSummary> {
  const request = options.fetch ?? fetch;
  const listing = new Listing(request);
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    options.onWarning?.(message);
  };

  let releases;
  try {
    releases = await listing.releases(options.url);
  } catch (err) {
    throw err instanceof ListingError ? new DownloadError(err.message) : err;
  }
  const wanted = options.release ?? 'latest';
  if (wanted !== 'latest' && !MONTH.test(wanted)) throw new DownloadError('--release must be YYYY-MM or latest');
  const release = wanted === 'latest' ? [...releases.months.keys()].at(-1)! : wanted;
  const folder = releases.months.get(release);
  if (!folder) {
    throw new DownloadError(`${options.url} has no release ${release}; it has ${[...releases.months.keys()].join(', ')}`);
  }
  let files: RemoteFile[];
  try {
    files = await listing.zips(folder, releases.headers);
  } catch (err) {
    throw err instanceof ListingError ? new DownloadError(err.message) : err;
  }
  if (!files.some((f) => /^estabelecimentos\d*\.zip$/i.test(f.name))) {
    throw new DownloadError(`${folder} lists no Estabelecimentos zip (has the page changed?)`);
  }

  let taxRegimes: RemoteFile[] = [];
  if (options.taxRegimesUrl) {
    try {
      taxRegimes = (await listing.zips(options.taxRegimesUrl)).filter((f) => /^(lucro|imunes)/i.test(f.name));
      if (taxRegimes.length === 0) warn(`${options.taxRegimesUrl} lists no tax-regime zip; the release is downloaded without them`);
    } catch (err) {
      warn(`${err instanceof Error ? err.message : String(err)}; the release is downloaded without the tax-regime files`);
    }
  }

  const target = path.join(options.dir, release);
  await mkdir(target, { recursive: true });
  const all = [...files, ...taxRegimes].filter((file) => {
    if (isPlainFileName(file.name)) return true;
    warn(`the listing names a file ${JSON.stringify(file.name)}, which would be written outside ${target}: skipped`);
    return false;
  });
  const sizes = all.map((f) => f.size);
  const totalBytes = sizes.every((s) => s !== undefined) ? sizes.reduce((a, b) => a! + b!, 0) : undefined;
  const onDisk = new Map<string, number>();
  const outcomes: FileOutcome[] = [];
  const failures: string[] = [];
  const report = (file: string, finished?: FileOutcome) =>
    options.onProgress?.({
      file,
      bytes: [...onDisk.values()].reduce((a, b) => a + b, 0),
      totalBytes,
      filesDone: outcomes.length + failures.length,
      files: all.length,
      ...(finished ? { finished } : {}),
    });

  let next = 0;
  const worker = async () => {
    for (let i = next++; i < all.length; i = next++) {
      const file = all[i]!;
      try {
        const outcome = await fetchFile(file, path.join(target, file.name), request, options, (bytes) => {
          onDisk.set(file.name, bytes);
          report(file.name);
        });
        outcomes.push(outcome);
        report(file.name, outcome);
      } catch (err) {
        failures.push(`${file.name} (${file.url}): ${(err as Error).message}`);
        report(file.name);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.parallel ?? 3, all.length)) }, worker));
  if (failures.length > 0) {
    throw new DownloadError(
      `${failures.length} of ${all.length} files of ${release} could not be downloaded (the others are in ${target}; run again to finish): ${failures.join('; ')}`,
    );
  }
  const count = (how: FileOutcome['how']) => outcomes.filter((o) => o.how === how).length;
  return {
    release,
    dir: target,
    files: files.length,
    taxRegimeFiles: taxRegimes.length,
    bytes: outcomes.reduce((sum, o) => sum + o.bytes, 0),
    downloaded: count('downloaded'),
    resumed: count('resumed'),
    present: count('present'),
    warnings,
  };
}

async function sizeOf(file: string): Promise<number | undefined> {
  return stat(file).then(
    (s) => s.size,
    () => undefined,
  );
}

/** Whether the file opens as a zip and lists at least one entry (its central directory is whole). */
export function zipOpens(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err) return resolve(err.message);
      let entries = 0;
      zip.on('entry', () => {
        entries++;
        zip.readEntry();
      });
      zip.on('error', (e: Error) => resolve(e.message));
      zip.on('end', () => resolve(entries > 0 ? null : 'the zip is empty'));
      zip.readEntry();
    });
  });
}

/** `bytes 100-199/1000` → 1000. */
function totalOf(res: Response, offset: number): number | undefined {
  const range = res.headers.get('content-range')?.match(/\/(\d+)\s*$/);
  if (range) return Number(range[1]);
  const length = res.headers.get('content-length');
  return length !== null && /^\d+$/.test(length) ? offset + Number(length) : undefined;
}

async function fetchFile(
  file: RemoteFile,
  target: string,
  request: typeof fetch,
  options: DownloadOptions,
  onBytes: (bytes: number) => void,
): Promise<FileOutcome> {
  const present = await sizeOf(target);
  if (present !== undefined && (file.size === undefined || present === file.size) && (await zipOpens(target)) === null) {
    onBytes(present);
    return { name: file.name, bytes: present, how: 'present' };
  }
  const part = `${target}.part`;
  const attempts = options.attempts ?? 8;
  const stallMs = options.stallMs ?? 60_000;
  let expected = file.size;
  let resumed = false;
  let lastError = 'no attempt';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, (options.backoffMs ?? 1000) * 2 ** Math.min(attempt - 2, 5)));
    let have = (await sizeOf(part)) ?? 0;
    if (expected !== undefined && have > expected) {
      await truncate(part, 0);
      have = 0;
    }
    if (expected === undefined || have < expected) {
      try {
        const got = await fetchInto(file, part, have, request, stallMs, onBytes);
        if (have > 0 && got.offset > 0) resumed = true;
        expected = got.total ?? expected;
      } catch (err) {
        if (err instanceof MissingFile) throw err;
        lastError = (err as Error).message;
        continue;
      }
    }
    const size = (await sizeOf(part)) ?? 0;
    if (expected !== undefined && size < expected) {
      lastError = `the connection ended at ${size} of ${expected} bytes`;
      continue;
    }
    if (expected !== undefined && size > expected) {
      lastError = `${size} bytes, more than the ${expected} announced`;
      await rm(part, { force: true });
      continue;
    }
    const broken = await zipOpens(part);
    if (broken !== null) {
      // Whole by its size, yet not a zip: corrupt, so downloaded again from the start.
      lastError = `the downloaded zip does not open (${broken})`;
      await rm(part, { force: true });
      continue;
    }
    await rename(part, target);
    return { name: file.name, bytes: size, how: resumed ? 'resumed' : 'downloaded' };
  }
  throw new Error(`gave up after ${attempts} attempts: ${lastError}`);
}

/** One request, appended to `part` from `have`; stalls abort it. */
async function fetchInto(
  file: RemoteFile,
  part: string,
  have: number,
  request: typeof fetch,
  stallMs: number,
  onBytes: (bytes: number) => void,
): Promise<{ offset: number; total: number | undefined }> {
  const controller = new AbortController();
  // Checked every `stallMs`: nothing at all (a stall), or a trickle that would never finish (a
  // byte now and then keeps a connection from ever looking silent), as curl's --speed-limit does.
  const least = Math.ceil((MIN_BYTES_PER_SECOND * stallMs) / 1000);
  let received = 0;
  const stall = setInterval(() => {
    if (received === 0) controller.abort(new Error(`no data for ${Math.round(stallMs / 1000)} s`));
    else if (received < least) controller.abort(new Error(`${received} bytes in ${Math.round(stallMs / 1000)} s, slower than ${MIN_BYTES_PER_SECOND / 1024} KiB/s`));
    received = 0;
  }, stallMs);
  try {
    const res = await request(file.url, {
      headers: { ...file.headers, ...(have > 0 ? { Range: `bytes=${have}-` } : {}) },
      signal: controller.signal,
    });
    if (res.status === 404 || res.status === 410) {
      await res.body?.cancel();
      throw new MissingFile(`the server has no such file (HTTP ${res.status})`);
    }
    if (res.status === 416) {
      await res.body?.cancel();
      return { offset: have, total: have };
    }
    if (res.status !== 200 && res.status !== 206) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    // A server that ignores the range sends the whole file again.
    const offset = res.status === 206 ? have : 0;
    const total = totalOf(res, offset);
    const handle = await open(part, offset === 0 ? 'w' : 'a');
    let written = offset;
    try {
      if (res.body) {
        for await (const chunk of res.body) {
          received += chunk.byteLength;
          await handle.write(chunk);
          written += chunk.byteLength;
          onBytes(written);
        }
      }
    } finally {
      await handle.close();
    }
    return { offset, total };
  } catch (err) {
    if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
    throw err;
  } finally {
    clearInterval(stall);
  }
}
