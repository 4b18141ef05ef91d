/**
 * Reading one release file as rows: the zip's single entry (or the extracted CSV) streamed,
 * decoded, split into fields (csv-splitter.ts), never held whole in memory. Anything wrong is a
 * Problem naming the file and line, and reading goes on: a bad line is skipped, a broken file
 * ends early with the rows read so far.
 */
import { createReadStream } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { PassThrough, pipeline, Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import yauzl from 'yauzl';
import type { ReleaseFile } from './release-files.ts';
import { CsvSplitter, type SplitRow } from './csv-splitter.ts';

export interface Problem {
  file: string;
  /** 1-based line where the record starts; absent for a problem with the whole file. */
  line?: number;
  message: string;
}

const ENDS_EARLY = 'the file ends early';
const NOT_READ = 'the file is not read';

/** Whether, after this problem, the file does not count as read whole: what it would replace is kept. */
export const cutShort = (problem: Problem): boolean => problem.message.startsWith(ENDS_EARLY) || problem.message.startsWith(NOT_READ);

/** A row's fields and the line it starts on; see {@link SplitRow} for rows whose fields were left `quoted`. */
export type Row = SplitRow;

/** The zip's entries as yauzl lists them, so a file that cannot be opened says why. */
function openZip(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    ),
  );
}

async function firstEntry(zip: yauzl.ZipFile): Promise<yauzl.Entry | undefined> {
  return new Promise((resolve, reject) => {
    zip.once('entry', resolve);
    zip.once('end', () => resolve(undefined));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/**
 * An entry's bytes as they inflate, checked against the CRC-32 its zip records: yauzl does not
 * check it, and damaged bytes that still inflate (or a stored entry's, which need not) would be
 * read as rows. A mismatch is an error at the entry's end, as a cut zip's is.
 */
function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) => {
      if (err) return reject(err);
      let crc = 0;
      const checked = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          crc = zlib.crc32(chunk, crc);
          done(null, chunk);
        },
        flush(done) {
          done(crc === entry.crc32 ? null : new Error(`its CRC-32 does not match the zip's: ${entry.fileName} is damaged`));
        },
      });
      // Either end's error or destruction reaches the other.
      resolve(pipeline(stream, checked, () => undefined));
    }),
  );
}

const LOCAL_HEADER = 0x04034b50;

/**
 * A zip whose end was cut off has no central directory, so no zip library will open it; its
 * first entry's local header is still at the start, and deflate data can be inflated up to the
 * cut. That salvages every complete line before it.
 */
async function salvageTruncatedZip(path: string): Promise<{ name: string; stream: Readable }> {
  const handle = await openFile(path, 'r');
  try {
    const header = Buffer.alloc(30);
    await handle.read(header, 0, 30, 0);
    if (header.readUInt32LE(0) !== LOCAL_HEADER) throw new Error('not a zip file');
    const method = header.readUInt16LE(8);
    const nameLength = header.readUInt16LE(26);
    const extraLength = header.readUInt16LE(28);
    const name = Buffer.alloc(nameLength);
    await handle.read(name, 0, nameLength, 30);
    const raw = createReadStream(path, { start: 30 + nameLength + extraLength });
    if (method === 0) return { name: name.toString('latin1'), stream: raw };
    if (method !== 8) throw new Error(`unsupported compression method ${method}`);
    return { name: name.toString('latin1'), stream: raw.pipe(zlib.createInflateRaw()) };
  } finally {
    await handle.close();
  }
}

/**
 * The bytes of a release file, and the name of the CSV they come from; `damaged` when they are
 * not all of it (a damaged zip read up to its damage, or a zip holding more than one file).
 */
export async function openReleaseFile(
  file: ReleaseFile,
  report: (problem: Problem) => void,
): Promise<{ innerName: string; stream: Readable; damaged: boolean } | undefined> {
  if (!file.zipped) return { innerName: file.name, stream: createReadStream(file.path), damaged: false };
  try {
    const zip = await openZip(file.path);
    const entry = await firstEntry(zip);
    if (!entry) {
      report({ file: file.name, message: 'the zip is empty' });
      return undefined;
    }
    if (entry.fileName.endsWith('/')) throw new Error('the zip holds a folder, not a CSV');
    const stream = await openEntry(zip, entry);
    // The Receita's zips hold one CSV each: what else is there would go unread, so the file is not read whole.
    if (zip.entryCount > 1) {
      report({ file: file.name, message: `the zip holds ${zip.entryCount} files, not one CSV: only the first, ${entry.fileName}, is read, and the release is incomplete` });
      zip.close();
    }
    return { innerName: entry.fileName, stream, damaged: zip.entryCount > 1 };
  } catch (err) {
    try {
      const salvaged = await salvageTruncatedZip(file.path);
      report({ file: file.name, message: `damaged zip (${(err as Error).message}); reading what precedes the damage` });
      return { innerName: salvaged.name, stream: salvaged.stream, damaged: true };
    } catch {
      report({ file: file.name, message: `cannot read the zip: ${(err as Error).message}` });
      return undefined;
    }
  }
}

/**
 * Every CSV of a release file, one after another: a tax-regime zip may hold a folder of per-year
 * files (`Lucro Presumido/Lucro Presumido 2018.csv` …). A damaged zip gives what precedes the
 * damage of its first entry, marked `damaged`.
 */
export async function* openReleaseEntries(
  file: ReleaseFile,
  report: (problem: Problem) => void,
): AsyncGenerator<{ innerName: string; stream: Readable; damaged: boolean }> {
  if (!file.zipped) {
    yield { innerName: file.name, stream: createReadStream(file.path), damaged: false };
    return;
  }
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(file.path);
  } catch {
    const opened = await openReleaseFile(file, report);
    if (opened) yield opened;
    return;
  }
  let entries = 0;
  try {
    for (let entry = await firstEntry(zip); entry; entry = await firstEntry(zip)) {
      if (entry.fileName.endsWith('/')) continue;
      entries++;
      const stream = await openEntry(zip, entry);
      yield { innerName: entry.fileName, stream, damaged: false };
    }
  } catch (err) {
    // An entry yauzl refuses (a name outside the zip, `../x.csv`; a method it lacks): the entries after it go unread.
    report({ file: file.name, message: `${ENDS_EARLY}: the zip is damaged after ${entries} of its files (${(err as Error).message})` });
    return;
  } finally {
    zip.close();
  }
  if (entries === 0) report({ file: file.name, message: 'the zip is empty' });
}

/** Whether bytes read as UTF-8 hold multi-byte sequences and no invalid ones. */
function looksUtf8(bytes: Buffer): boolean {
  let multibyte = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 0x80) continue;
    const length = b >= 0xf0 && b < 0xf5 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
    if (length === 0) return false;
    if (i + length > bytes.length) return multibyte; // a sequence cut by the end of the sample
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return false;
    multibyte = true;
    i += length - 1;
  }
  return multibyte;
}

/**
 * Bytes to text. The Receita publishes ISO-8859-1; a file that was re-saved as UTF-8 would turn
 * every accent into two wrong characters, so the first bytes are sniffed and such a file decoded
 * as UTF-8 (and reported), without its byte-order mark if it has one. Stray NUL bytes, seen in
 * real releases, are dropped.
 */
function decoder(fileName: string, report: (problem: Problem) => void): (bytes: Buffer) => string {
  let decode: ((chunk: Buffer) => string) | undefined;
  const utf8 = new StringDecoder('utf8');
  return (chunk) => {
    if (!decode) {
      // An editor's byte-order mark says UTF-8, and is no part of the first row's first field.
      const bom = chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
      if (bom || looksUtf8(chunk.subarray(0, 1 << 16))) {
        report({ file: fileName, message: 'the file is UTF-8, not ISO-8859-1 as published; decoded as UTF-8' });
        decode = (bytes) => utf8.write(bytes);
      } else {
        decode = (bytes) => bytes.toString('latin1');
      }
      if (bom) chunk = chunk.subarray(3);
    }
    const text = decode(chunk);
    return text.includes('\0') ? text.replaceAll('\0', '') : text;
  };
}

/** Bytes decoded and split at a time: a zip's inflated pieces are small (16 KiB). */
const BLOCK_BYTES = 1 << 19;
const READ_AHEAD_BYTES = 1 << 22;

/**
 * The rows of a file with exactly `columns` fields, each with the line it starts on, a block of
 * them at a time. Rows with another count are reported and skipped; a stream error (a cut or
 * corrupt zip) is reported with the line reached and ends the file.
 */
export async function* readRowBatches(
  stream: Readable,
  file: ReleaseFile | { name: string },
  columns: number,
  report: (problem: Problem) => void,
  /**
   * The tax-regime files are comma-separated, with a header row that starts with this field.
   * `splitFirst`: rows in the Receita's own form come with only that many fields split (see SplitRow).
   */
  layout: { delimiter: string; header?: string; splitFirst?: number } = { delimiter: ';' },
): AsyncGenerator<Row[]> {
  const decode = decoder(file.name, report);
  // Rows given, and lines skipped for their shape: a file of only the latter is not this kind of file as published.
  let given = 0;
  let misshapen = 0;
  const onOverlong = (line: number, max: number) => {
    misshapen++;
    report({ file: file.name, line, message: `a line longer than ${max.toLocaleString('en')} characters (a damaged file?): skipped up to its next line break` });
  };
  const splitter = new CsvSplitter(layout.delimiter, layout.splitFirst === undefined ? { onOverlong } : { splitFirst: layout.splitFirst, columns, onOverlong });
  const wanted = (rows: Row[]): Row[] => {
    const out: Row[] = [];
    for (const row of rows) {
      const { fields } = row;
      if (row.quoted !== undefined) {
        out.push(row); // the splitter counted its fields
        continue;
      }
      if (fields.length === 1 && fields[0] === '') continue; // a blank line
      if (layout.header !== undefined && fields[0]!.replace(/^\uFEFF/, '').trim().toLowerCase() === layout.header) continue;
      if (fields.length !== columns) {
        misshapen++;
        report({ file: file.name, line: row.line, message: `expected ${columns} fields, found ${fields.length}` });
        continue;
      }
      out.push(row);
    }
    given += out.length;
    return out;
  };
  let held: Buffer[] = [];
  let heldBytes = 0;
  const take = (): string => {
    const bytes = held.length === 1 ? held[0]! : Buffer.concat(held, heldBytes);
    held = [];
    heldBytes = 0;
    return decode(bytes);
  };
  // Inflating runs on libuv's threads, 16 KiB at a time, and stops while its few KiB wait to be
  // read: a few MiB of room let it go on while this thread splits rows (it sat idle a fifth of
  // the time). Data that arrived before an error is read before the error is thrown.
  const ahead = new PassThrough({ highWaterMark: READ_AHEAD_BYTES });
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
    ahead.end();
  });
  stream.pipe(ahead);
  try {
    for await (const chunk of ahead as AsyncIterable<Buffer>) {
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes < BLOCK_BYTES) continue;
      const rows = wanted(splitter.push(take()));
      if (rows.length > 0) yield rows;
    }
    if (failure) throw failure;
    const rows = wanted(splitter.push(heldBytes > 0 ? take() : '', true));
    if (rows.length > 0) yield rows;
    if (given === 0 && misshapen > 0) {
      report({
        file: file.name,
        message: `${NOT_READ}: none of its lines has the ${columns} fields of its kind (another kind of file, another separator, or line ends other than LF and CRLF)`,
      });
    }
  } catch (err) {
    // What was inflated before the damage still holds whole rows.
    const rows = heldBytes > 0 ? wanted(splitter.push(take())) : [];
    report({ file: file.name, line: splitter.line, message: `${ENDS_EARLY}: ${(err as Error).message}` });
    if (rows.length > 0) yield rows;
  } finally {
    stream.destroy();
    ahead.destroy();
  }
}
