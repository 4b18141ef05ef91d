/** Every entry of a zip, read whole (test files are small). */
import yauzl from 'yauzl';

export interface Entry {
  name: string;
  bytes: Buffer;
}

export async function unzip(file: string): Promise<Entry[]> {
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const entries: Entry[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      entries.push({ name: entry.fileName, bytes: Buffer.concat(chunks) });
    }
  } finally {
    zip.close();
  }
  return entries;
}
