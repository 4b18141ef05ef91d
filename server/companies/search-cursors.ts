/**
 * Search pages (decisions.md, "Search pages"): a `nextCursor` is a random token whose hash names a
 * document holding where the search stands. Kept server-side rather than signed, so the position
 * may hold what a signature would have to carry in the token (the people search's rows already
 * sent, per source), nothing needs a secret, and a token means nothing outside this store: a
 * forged, truncated or expired one is simply unknown. Each cursor is bound to the workspace, the
 * operation and a hash of the filters it came from; any mismatch is 400 `invalid_cursor`, and
 * the document is never read for another workspace.
 *
 * A cursor describes the position before the page it asks for and never changes, so asking
 * again with it gives the same page again (charged again, as any search). Documents expire
 * through the store's TTL index.
 */
import { createHash, randomBytes } from 'node:crypto';
import { MAX_ROWS_PER_SEARCH } from '../../shared/schemas/search.ts';
import { ServiceError } from '../lib/errors.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

/** How long a cursor stays valid: the contract promises at least an hour. */
export const CURSOR_TTL_MS = 2 * 3600_000;
export { MAX_ROWS_PER_SEARCH };

const COLLECTION = 'searchCursors';
const PREFIX = 'sc1_';
/** 32 random bytes, base64url: 43 characters. */
const TOKEN = /^sc1_[A-Za-z0-9_-]{43}$/;

export interface CursorDoc<P = unknown> {
  /** SHA-256 of the token: a leaked store does not leak usable cursors. */
  _id: string;
  workspaceId: string;
  operation: string;
  /** SHA-256 of the search's canonical filters (without `cursor` and `limit`). */
  filters: string;
  /** Rows already given by the pages before this one. */
  sent: number;
  position: P;
  expiresAt: Date;
}

export const searchCursorIndexes: IndexDeclaration[] = [
  { collection: COLLECTION, keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
];

/** JSON with object keys sorted, so two spellings of the same filters hash alike. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The hash that binds a cursor to its search: everything asked except the cursor and the page size. */
export function filtersHash(input: Record<string, unknown>): string {
  const { cursor: _cursor, limit: _limit, ...filters } = input;
  return createHash('sha256').update(canonical(filters)).digest('hex');
}

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');

const refused = (why: string) => new ServiceError('invalid_cursor', `cursor ${why}; start the search again without it`);

/** Where a page starts: the first page, or what an earlier page stored. */
export interface PageStart<P> {
  sent: number;
  position: P | undefined;
  /** Rows this page may still give (the 1,000-row cap across pages). */
  room: number;
}

export class SearchCursors {
  private readonly docs: Collection<CursorDoc>;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.docs = store.collection<CursorDoc>(COLLECTION);
  }

  /** The start of the page a request asks for; a cursor that is not this search's is 400 `invalid_cursor`. */
  async start<P>(workspaceId: string, operation: string, input: Record<string, unknown>): Promise<PageStart<P>> {
    const token = input.cursor;
    // Absent or null (the schema allows it: a client sending back the last page's nextCursor) is the first page.
    if (token === undefined || token === null) return { sent: 0, position: undefined, room: MAX_ROWS_PER_SEARCH };
    if (typeof token !== 'string' || !TOKEN.test(token)) throw refused('is not one this service gave (it may have been cut or changed)');
    const doc = await this.docs.findOne({ _id: sha256(token) });
    // Another workspace's cursor reads as unknown: its existence is not this workspace's business.
    if (!doc || doc.workspaceId !== workspaceId || doc.operation !== operation) throw refused('is unknown or has expired');
    if (doc.expiresAt.getTime() <= this.now()) throw refused('has expired');
    if (doc.filters !== filtersHash(input)) throw refused('belongs to a search with other filters');
    return { sent: doc.sent, position: doc.position as P, room: Math.max(0, MAX_ROWS_PER_SEARCH - doc.sent) };
  }

  /**
   * The cursor of the next page, stored before the page is answered; null when the search is
   * over (no more rows, or the cap reached).
   */
  async next<P>(
    workspaceId: string,
    operation: string,
    input: Record<string, unknown>,
    sent: number,
    position: P | null,
  ): Promise<string | null> {
    if (position === null || sent >= MAX_ROWS_PER_SEARCH) return null;
    const token = PREFIX + randomBytes(32).toString('base64url');
    await this.docs.insertOne({
      _id: sha256(token),
      workspaceId,
      operation,
      filters: filtersHash(input),
      sent,
      position,
      expiresAt: new Date(this.now() + CURSOR_TTL_MS),
    });
    return token;
  }
}
