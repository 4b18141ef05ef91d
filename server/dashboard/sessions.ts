/**
 * Dashboard sessions, kept in the store: the cookie holds a random token, the store its hash, the
 * workspace, how the owner signed in, and when the session ends. A session ends after 12 idle
 * hours (the TTL index removes it; a lookup refuses it from that moment) or at sign-out. Its end
 * moves forward with use, written at most every few minutes, so browsing costs no write per
 * request.
 *
 * A session signed in through the issuer belongs to a member, and ends the moment that member is
 * removed: each lookup reads the member document from the store (never a cache, which another
 * instance's removal would not reach), and deletes the session once the member is gone.
 */
import type { Members } from '../auth/members.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import { isWellFormedToken, newSecretToken, tokenId } from './secret-token.ts';

export const SESSION_IDLE_MS = 12 * 3600_000;
/** How stale the stored end may get before a request moves it. */
const SLIDE_EVERY_MS = 5 * 60_000;

export interface SessionDoc {
  _id: string;
  workspaceId: string;
  /** A one-time link, or the issuer's authorization-code flow. */
  via: 'link' | 'oidc';
  /** Who signed in, as the issuer named them (e-mail or name); null for a link. */
  who: string | null;
  /** The member signed in as (OIDC); null for a link, which the operator issued to the workspace. */
  memberId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

export const sessionIndexes: IndexDeclaration[] = [
  { collection: 'dashboardSessions', keys: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } },
];

export class Sessions {
  private readonly sessions: Collection<SessionDoc>;

  constructor(
    store: Store,
    private readonly members: Pick<Members, 'isActive'>,
    private readonly now: () => number = Date.now,
  ) {
    this.sessions = store.collection<SessionDoc>('dashboardSessions');
  }

  /** A new session and the token its cookie carries. */
  async start(workspaceId: string, via: SessionDoc['via'], who: string | null, memberId: string | null = null): Promise<{ token: string; session: SessionDoc }> {
    const token = newSecretToken();
    const now = this.now();
    const session: SessionDoc = { _id: tokenId(token), workspaceId, via, who, memberId, createdAt: new Date(now), expiresAt: new Date(now + SESSION_IDLE_MS) };
    await this.sessions.insertOne(session);
    return { token, session };
  }

  /** The live session a cookie names, or null (none, forged, ended). */
  async find(token: unknown): Promise<SessionDoc | null> {
    if (!isWellFormedToken(token)) return null;
    const session = await this.sessions.findOne({ _id: tokenId(token) });
    const now = this.now();
    if (!session || session.expiresAt.getTime() <= now) return null;
    // Sessions from before members were recorded have no field: they came from links or predate removal.
    if (session.memberId && !(await this.members.isActive(session.memberId, session.workspaceId))) {
      await this.sessions.deleteOne({ _id: session._id });
      return null;
    }
    if (session.expiresAt.getTime() - now < SESSION_IDLE_MS - SLIDE_EVERY_MS) {
      const expiresAt = new Date(now + SESSION_IDLE_MS);
      await this.sessions.updateOne({ _id: session._id }, { $set: { expiresAt } });
      session.expiresAt = expiresAt;
    }
    return session;
  }

  async end(token: unknown): Promise<void> {
    if (isWellFormedToken(token)) await this.sessions.deleteOne({ _id: tokenId(token) });
  }
}
