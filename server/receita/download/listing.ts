/**
 * Where the Receita publishes its releases, and what each holds. Today a Nextcloud share
 * (`…/index.php/s/<token>`), listed with WebDAV `PROPFIND` (Depth 1) on `…/public.php/webdav/`
 * with the share token as user name and an empty password (as the caiopizzol and rictom loaders
 * do); before it, Apache-style index pages (`…/dados_abertos_cnpj/YYYY-MM/`), still the form of
 * the tax-regime folder. Each URL is tried with PROPFIND first and read as an index page when
 * that fails; when neither gives a listing the error names the URL.
 *
 * The multistatus XML is read with a small regex scoped to its `response` elements (href,
 * getcontentlength, resourcetype): no XML parser is installed, and linkedom's namespace
 * handling buys nothing for three elements.
 */

export interface RemoteFile {
  name: string;
  url: string;
  /** Bytes, when the listing says (PROPFIND does; an index page does not). */
  size: number | undefined;
  /** Sent with every request for the file (the share's credentials). */
  headers: Record<string, string>;
}

export class ListingError extends Error {}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const PROPFIND_BODY =
  '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getcontentlength/><d:resourcetype/></d:prop></d:propfind>';

interface Entry {
  name: string;
  url: string;
  folder: boolean;
  size: number | undefined;
}

/** A Nextcloud public share: its WebDAV root and the Basic credentials its token stands for. */
function shareOf(url: URL): { root: URL; headers: Record<string, string> } | undefined {
  const match = url.pathname.match(/^(.*?)\/(?:index\.php\/)?s\/([A-Za-z0-9]+)\/?$/);
  if (!match) return undefined;
  const root = new URL(`${match[1]}/public.php/webdav/`, url);
  return { root, headers: { Authorization: `Basic ${Buffer.from(`${match[2]}:`).toString('base64')}` } };
}

function decodeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The last segment of a URL's path, decoded. */
const nameOf = (url: URL): string => decodeURIComponent(url.pathname.replace(/\/$/, '').split('/').pop()!);

/**
 * Whether a listed name can be a file of the folder it is downloaded into: an encoded `/` or
 * `\\` (`..%2F..%2Fx.zip`), `..` or a NUL in it would write elsewhere, so such a name is never
 * a file name, whatever the listing says.
 */
export function isPlainFileName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}

/** The `response` elements of a multistatus, the listed folder itself left out. */
export function parseMultistatus(xml: string, base: URL): Entry[] {
  const entries: Entry[] = [];
  for (const [, body] of xml.matchAll(/<(?:[\w-]+:)?response\b[^>]*>([\s\S]*?)<\/(?:[\w-]+:)?response>/g)) {
    const href = /<(?:[\w-]+:)?href>([^<]*)<\/(?:[\w-]+:)?href>/.exec(body!)?.[1];
    if (!href) continue;
    const url = new URL(decodeXml(href.trim()), base);
    if (url.pathname.replace(/\/$/, '') === base.pathname.replace(/\/$/, '')) continue;
    const folder = /<(?:[\w-]+:)?collection\s*\/?>/.test(body!);
    const length = /<(?:[\w-]+:)?getcontentlength>\s*(\d+)\s*<\//.exec(body!)?.[1];
    entries.push({ name: nameOf(url), url: url.href, folder, size: length === undefined ? undefined : Number(length) });
  }
  return entries;
}

/** The links of an Apache-style index page, parent and sorting links left out. */
export function parseIndexPage(html: string, base: URL): Entry[] {
  const entries: Entry[] = [];
  const seen = new Set<string>();
  for (const [, raw] of html.matchAll(/<a\s[^>]*href\s*=\s*"([^"]+)"/gi)) {
    const href = decodeXml(raw!);
    if (href.startsWith('?') || href.startsWith('#') || href.startsWith('../') || href === '/') continue;
    const url = new URL(href, base);
    // Only what lies below the listed folder.
    if (!url.href.startsWith(base.href) || url.href === base.href || seen.has(url.href)) continue;
    seen.add(url.href);
    const folder = url.pathname.endsWith('/');
    entries.push({ name: nameOf(url), url: url.href, folder, size: undefined });
  }
  return entries;
}

export class Listing {
  constructor(
    private readonly request: typeof fetch = fetch,
    private readonly timeoutMs = 60_000,
  ) {}

  /** What a folder holds: PROPFIND where it is a WebDAV share (or answers one), else its index page. */
  async list(folderUrl: string, given: Record<string, string> = {}): Promise<{ entries: Entry[]; headers: Record<string, string> }> {
    let url: URL;
    try {
      url = new URL(folderUrl.endsWith('/') ? folderUrl : `${folderUrl}/`);
    } catch {
      throw new ListingError(`${folderUrl} is not a URL`);
    }
    const share = shareOf(url);
    const davUrl = share?.root ?? url;
    const headers = share?.headers ?? given;
    const reasons: string[] = [];
    try {
      const res = await this.request(davUrl, {
        method: 'PROPFIND',
        headers: { ...headers, Depth: '1', 'Content-Type': 'application/xml; charset=utf-8' },
        body: PROPFIND_BODY,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.text();
      if (res.status === 207) {
        const entries = parseMultistatus(text, davUrl);
        if (entries.length > 0 || /multistatus/.test(text)) return { entries, headers };
        reasons.push(`PROPFIND ${davUrl.href} answered 207 without a multistatus`);
      } else reasons.push(`PROPFIND ${davUrl.href} answered ${res.status}`);
    } catch (err) {
      reasons.push(`PROPFIND ${davUrl.href} failed: ${(err as Error).message}`);
    }
    if (share || Object.keys(given).length > 0) {
      throw new ListingError(`cannot list the releases at ${folderUrl}: ${reasons.join('; ')}`);
    }
    try {
      const res = await this.request(url, { signal: AbortSignal.timeout(this.timeoutMs) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
      if (!/<a\s/i.test(text)) throw new Error('the page holds no links (has its shape changed?)');
      return { entries: parseIndexPage(text, url), headers: {} };
    } catch (err) {
      reasons.push(`GET ${url.href} ${(err as Error).message.startsWith('GET') ? (err as Error).message.slice(4) : `failed: ${(err as Error).message}`}`);
    }
    throw new ListingError(`cannot list the releases at ${folderUrl}: ${reasons.join('; ')}`);
  }

  /** The `YYYY-MM` folders of the releases, oldest first, and the folder URL of each. */
  async releases(url: string): Promise<{ months: Map<string, string>; headers: Record<string, string>; others: Entry[] }> {
    const { entries, headers } = await this.list(url);
    const months = new Map<string, string>();
    for (const entry of entries) if (entry.folder && MONTH.test(entry.name)) months.set(entry.name, entry.url);
    if (months.size === 0) {
      throw new ListingError(`cannot list the releases at ${url}: no YYYY-MM folder found there (has the page changed?)`);
    }
    return { months: new Map([...months].sort(([a], [b]) => a.localeCompare(b))), headers, others: entries };
  }

  /** The zips of a folder. */
  async zips(folderUrl: string, headers?: Record<string, string>): Promise<RemoteFile[]> {
    const listed = await this.list(folderUrl, headers);
    return listed.entries
      .filter((entry) => !entry.folder && /\.zip$/i.test(entry.name))
      .map((entry) => ({ name: entry.name, url: entry.url, size: entry.size, headers: headers ?? listed.headers }));
  }
}
