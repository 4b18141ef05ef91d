/**
 * Issue 22: `download cnpj` against a loopback server shaped like the Receita's: a Nextcloud
 * share listed with WebDAV PROPFIND (the token as Basic user name), the tax-regime files under an
 * Apache-style index page, files served with HTTP Range. Faults: a connection dropped mid-file
 * (resumed with a Range request), a stall or a trickle (cut and resumed), a corrupt zip
 * (downloaded again), a 404 (the command fails naming the file, the others are kept), a listing
 * that is unreachable or changed in shape (a clear error naming the URL), and one naming files
 * outside the release folder (skipped, with a warning). Then `import cnpj --download` as the CLI
 * runs it: one command from the listing to the imported registry.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { downloadRelease, DownloadError, type DownloadOptions } from '../../../server/receita/download/download.ts';
import { parseIndexPage, parseMultistatus } from '../../../server/receita/download/listing.ts';
import { generateRelease } from '../../../server/seed/release-generator.ts';
import { runCli } from '../../helpers/processes.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const TOKEN = 'YggdBLfdninEJX9';
const TAX_FILES = ['Lucro Real.zip', 'Lucro Presumido.zip', 'Lucro Arbitrado.zip', 'Imunes e Isentas.zip'];

interface Faults {
  drop: Set<string>;
  stall: Set<string>;
  /** Sent a byte at a time, a few a second, once. */
  trickle: Set<string>;
  corrupt: Set<string>;
  missing: Set<string>;
  /** Names the release folder lists (and serves, as a copy of Cnaes.zip) besides the published files. */
  listed: string[];
  /** The listing answers this instead of a multistatus/index. */
  listing?: 'down' | 'changed';
}

let source: string;
const files = new Map<string, Buffer>();
let server: http.Server;
let base: string;
let faults: Faults;
const requests: Array<{ method: string; url: string; range?: string; auth?: string }> = [];

function resetFaults(): void {
  faults = { drop: new Set(), stall: new Set(), trickle: new Set(), corrupt: new Set(), missing: new Set(), listed: [] };
  requests.length = 0;
}

function multistatus(folder: string, entries: Array<{ name: string; size?: number }>): string {
  const response = (href: string, prop: string) =>
    `<d:response><d:href>${href}</d:href><d:propstat><d:prop>${prop}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>`;
  return (
    '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns">' +
    response(folder, '<d:resourcetype><d:collection/></d:resourcetype>') +
    entries
      .map((e) =>
        e.size === undefined
          ? response(`${folder}${e.name}/`, '<d:resourcetype><d:collection/></d:resourcetype>')
          : response(`${folder}${encodeURIComponent(e.name)}`, `<d:getcontentlength>${e.size}</d:getcontentlength><d:resourcetype/>`),
      )
      .join('') +
    '</d:multistatus>'
  );
}

function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = decodeURIComponent(req.url!.split('?')[0]!);
  requests.push({ method: req.method!, url, range: req.headers.range, auth: req.headers.authorization });
  const authorized = req.headers.authorization === `Basic ${Buffer.from(`${TOKEN}:`).toString('base64')}`;

  if (url.startsWith('/public.php/webdav/')) {
    if (!authorized) return void res.writeHead(401).end();
    if (faults.listing === 'down') return void res.destroy();
    if (req.method === 'PROPFIND') {
      if (faults.listing === 'changed') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>maintenance</p>');
      res.writeHead(207, { 'Content-Type': 'application/xml; charset=utf-8' });
      if (url === '/public.php/webdav/') return void res.end(multistatus(url, [{ name: '2026-09' }, { name: '2026-10' }]));
      if (url === '/public.php/webdav/2026-10/') {
        const main = [...files.keys(), ...faults.listed].filter((name) => !TAX_FILES.includes(name));
        return void res.end(multistatus(url, main.map((name) => ({ name, size: (files.get(name) ?? files.get('Cnaes.zip')!).length }))));
      }
      return void res.end(multistatus(url, []));
    }
    const name = url.slice('/public.php/webdav/2026-10/'.length);
    return sendFile(name, req, res);
  }
  if (url.startsWith('/regime_tributario/')) {
    if (req.method === 'PROPFIND') return void res.writeHead(405).end();
    if (url === '/regime_tributario/') {
      const links = TAX_FILES.map((name) => `<tr><td><a href="${encodeURIComponent(name)}">${name}</a></td><td>1.2M</td></tr>`);
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return void res.end(`<html><body><h1>Index of /regime_tributario</h1><table><tr><td><a href="?C=N;O=D">Name</a></td></tr><tr><td><a href="../">Parent Directory</a></td></tr>${links.join('')}</table></body></html>`);
    }
    return sendFile(url.slice('/regime_tributario/'.length), req, res);
  }
  res.writeHead(404).end();
}

function sendFile(name: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const bytes = files.get(name) ?? (faults.listed.includes(name) ? files.get('Cnaes.zip') : undefined);
  if (!bytes || faults.missing.has(name)) return void res.writeHead(404).end('not found');
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const start = range ? Number(range[1]) : 0;
  if (start >= bytes.length) return void res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` }).end();
  const body = bytes.subarray(start);
  res.writeHead(range ? 206 : 200, {
    'Content-Type': 'application/zip',
    'Content-Length': String(body.length),
    ...(range ? { 'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : {}),
  });
  const half = Math.floor(body.length / 2);
  if (faults.drop.delete(name)) {
    // Dropped once the client has had time to take the first half: a web stream that errors
    // discards the chunks its reader has not taken yet, so a drop right behind the data (20 ms,
    // on a busy machine) could leave nothing to resume from, and the file was downloaded again whole.
    res.write(body.subarray(0, half), () => setTimeout(() => res.destroy(), 500));
    return;
  }
  if (faults.stall.delete(name)) {
    res.write(body.subarray(0, half)); // then nothing more, the connection kept open
    return;
  }
  if (faults.trickle.delete(name)) {
    // Never silent long enough to look stalled, and never done: a byte every 50 ms.
    let at = 0;
    const timer = setInterval(() => (at < body.length && !res.destroyed ? res.write(body.subarray(at, ++at)) : clearInterval(timer)), 50);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (faults.corrupt.delete(name)) return void res.end(Buffer.alloc(body.length, 0x41));
  res.end(body);
}

beforeAll(async () => {
  source = await tempDir('download-source');
  await generateRelease({ dir: source, establishments: 300, seed: 5 });
  for (const name of await readdir(source)) files.set(name, await readFile(path.join(source, name)));
  server = http.createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(resetFaults);
resetFaults();

const options = async (extra: Partial<DownloadOptions> = {}): Promise<DownloadOptions> => ({
  url: `${base}/index.php/s/${TOKEN}`,
  taxRegimesUrl: `${base}/regime_tributario/`,
  dir: await tempDir('downloads'),
  stallMs: 300,
  backoffMs: 5,
  ...extra,
});

async function sameAsPublished(dir: string): Promise<void> {
  const names = (await readdir(dir)).sort();
  expect(names).toEqual([...files.keys()].sort());
  for (const name of names) expect((await readFile(path.join(dir, name))).equals(files.get(name)!), name).toBe(true);
}

describe('download cnpj', () => {
  it('lists the share with PROPFIND, takes the latest release and the tax-regime files from an index page', async () => {
    const progress: number[] = [];
    const opts = await options({ onProgress: (p) => progress.push(p.filesDone) });
    const summary = await downloadRelease(opts);
    expect(summary).toMatchObject({ release: '2026-10', dir: path.join(opts.dir, '2026-10'), files: 37, taxRegimeFiles: 4, downloaded: 41, resumed: 0, present: 0, warnings: [] });
    await sameAsPublished(summary.dir);
    expect(requests.find((r) => r.method === 'PROPFIND')).toMatchObject({ url: '/public.php/webdav/' });
    expect(requests.filter((r) => r.url.startsWith('/public.php/')).every((r) => r.auth?.startsWith('Basic '))).toBe(true);
    expect(progress.at(-1)).toBe(41);

    // Run again: every file is already whole, nothing is fetched.
    requests.length = 0;
    expect(await downloadRelease(opts)).toMatchObject({ present: 41, downloaded: 0 });
    expect(requests.filter((r) => r.method === 'GET' && r.url.endsWith('.zip'))).toEqual([]);
  });

  it('resumes a connection dropped mid-file with a Range request, and a stalled one', async () => {
    faults.drop.add('Estabelecimentos0.zip');
    faults.stall.add('Lucro Presumido.zip');
    const summary = await downloadRelease(await options({ release: '2026-10' }));
    expect(summary.resumed).toBe(2);
    await sameAsPublished(summary.dir);
    const ranged = requests.filter((r) => r.range);
    expect(ranged.map((r) => path.basename(r.url)).sort()).toEqual(['Estabelecimentos0.zip', 'Lucro Presumido.zip']);
    expect(ranged.every((r) => /^bytes=[1-9]\d*-$/.test(r.range!))).toBe(true);
  });

  it('cuts a download that trickles in too slowly to finish, and resumes it', async () => {
    faults.trickle.add('Empresas2.zip');
    const summary = await downloadRelease(await options());
    await sameAsPublished(summary.dir);
    expect(requests.filter((r) => r.url.endsWith('Empresas2.zip') && r.range)).not.toEqual([]);
  });

  it('downloads a corrupt zip again, and never leaves a half file under the real name', async () => {
    faults.corrupt.add('Socios3.zip');
    const summary = await downloadRelease(await options());
    await sameAsPublished(summary.dir);
    expect(requests.filter((r) => r.method === 'GET' && r.url.endsWith('Socios3.zip'))).toHaveLength(2);
  });

  it('fails naming a file the server does not have, keeping the others', async () => {
    faults.missing.add('Empresas7.zip');
    const opts = await options();
    const failure = await downloadRelease(opts).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DownloadError);
    expect((failure as Error).message).toMatch(
      /^1 of 41 files of 2026-10 could not be downloaded .*Empresas7\.zip \(http:\/\/127\.0\.0\.1:\d+\/public\.php\/webdav\/2026-10\/Empresas7\.zip\): the server has no such file \(HTTP 404\)$/,
    );
    const kept = await readdir(path.join(opts.dir, '2026-10'));
    expect(kept).toHaveLength(40);
    expect(kept).not.toContain('Empresas7.zip');
    // No retry for a 404.
    expect(requests.filter((r) => r.url.endsWith('Empresas7.zip'))).toHaveLength(1);
  });

  it('says clearly, naming the URL, when the listing is unreachable or changed in shape', async () => {
    faults.listing = 'down';
    await expect(downloadRelease(await options())).rejects.toThrow(
      new RegExp(`^cannot list the releases at ${base}/index\\.php/s/${TOKEN}: PROPFIND ${base}/public\\.php/webdav/ failed`),
    );
    faults.listing = 'changed';
    await expect(downloadRelease(await options())).rejects.toThrow(`cannot list the releases at ${base}/index.php/s/${TOKEN}: PROPFIND ${base}/public.php/webdav/ answered 200`);
    faults.listing = undefined;
    await expect(downloadRelease(await options({ url: `${base}/nothing/here/` }))).rejects.toThrow(
      `cannot list the releases at ${base}/nothing/here/: PROPFIND ${base}/nothing/here/ answered 404; GET ${base}/nothing/here/ answered 404`,
    );
    await expect(downloadRelease(await options({ url: 'http://127.0.0.1:9/' }))).rejects.toThrow('cannot list the releases at http://127.0.0.1:9/');
    await expect(downloadRelease(await options({ release: '2025-01' }))).rejects.toThrow(`has no release 2025-01; it has 2026-09, 2026-10`);
  });

  it('never writes outside the release folder, whatever names the listing gives', async () => {
    faults.listed.push('../../Socios9.zip', '../Simples.zip', 'sub/Cnaes.zip', '/tmp/Cnaes.zip');
    const warnings: string[] = [];
    const opts = await options({ onWarning: (w) => warnings.push(w) });
    const summary = await downloadRelease(opts);
    await sameAsPublished(summary.dir);
    expect(await readdir(opts.dir)).toEqual(['2026-10']);
    expect(await readdir(path.dirname(opts.dir))).not.toContain('Socios9.zip');
    expect(warnings).toEqual(
      ['../../Socios9.zip', '../Simples.zip', 'sub/Cnaes.zip', '/tmp/Cnaes.zip'].map((name) => expect.stringContaining(`the listing names a file ${JSON.stringify(name)}, which would be written outside`)),
    );
  });

  it('goes on without the tax-regime files when their folder cannot be listed, and says so', async () => {
    const warnings: string[] = [];
    const summary = await downloadRelease(await options({ taxRegimesUrl: `${base}/gone/`, onWarning: (w) => warnings.push(w) }));
    expect(summary.taxRegimeFiles).toBe(0);
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^cannot list the releases at ${base}/gone/: .*; the release is downloaded without the tax-regime files$`))]);
  });
});

describe('listings', () => {
  it('reads a Nextcloud multistatus: folders, files and sizes, the folder itself left out', () => {
    const xml = multistatus('/public.php/webdav/2026-10/', [{ name: 'Empresas0.zip', size: 1234 }, { name: 'sub' }]);
    expect(parseMultistatus(xml, new URL('http://x/public.php/webdav/2026-10/'))).toEqual([
      { name: 'Empresas0.zip', url: 'http://x/public.php/webdav/2026-10/Empresas0.zip', folder: false, size: 1234 },
      { name: 'sub', url: 'http://x/public.php/webdav/2026-10/sub/', folder: true, size: undefined },
    ]);
  });

  it('reads an Apache index page: its folder and file links, not the parent or sorting ones', () => {
    const html = '<a href="?C=M;O=A">Last modified</a><a href="/dados/">Parent</a><a href="2024-08/">2024-08/</a><a href="Lucro%20Real.zip">x</a>';
    expect(parseIndexPage(html, new URL('http://x/dados/cnpj/'))).toEqual([
      { name: '2024-08', url: 'http://x/dados/cnpj/2024-08/', folder: true, size: undefined },
      { name: 'Lucro Real.zip', url: 'http://x/dados/cnpj/Lucro%20Real.zip', folder: false, size: undefined },
    ]);
  });
});

describe('prospecta import cnpj --download', () => {
  it('downloads the release and imports it in one command', async () => {
    const work = await tempDir('download-import');
    faults.drop.add('Estabelecimentos3.zip');
    const env = {
      DATA_DIR: path.join(work, 'data'),
      CNPJ_RELEASES_URL: `${base}/index.php/s/${TOKEN}`,
      CNPJ_TAX_REGIMES_URL: `${base}/regime_tributario/`,
      CNPJ_DOWNLOAD_STALL_MS: '2000',
    };
    const result = await runCli(['import', 'cnpj', '--download', '--dir', path.join(work, 'releases')], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ release: '2026-10', complete: true, establishments: 300, problems: { count: 0 } });
    expect(result.json.taxRegimes.rows).toBeGreaterThan(0);
    expect(result.stderr).toContain('Estabelecimentos3.zip resumed');
    expect((await stat(path.join(work, 'releases', '2026-10', 'Lucro Real.zip'))).isFile()).toBe(true);

    // download cnpj alone needs no store: the files are there, nothing is fetched again.
    requests.length = 0;
    const again = await runCli(['download', 'cnpj', '--release', '2026-10', '--dir', path.join(work, 'releases')], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json).toMatchObject({ release: '2026-10', present: 41, downloaded: 0 });
    expect(requests.filter((r) => r.method === 'GET' && r.url.endsWith('.zip'))).toEqual([]);
  });
});
