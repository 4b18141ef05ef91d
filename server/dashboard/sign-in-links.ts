/**
 * One-time sign-in links (`prospecta dashboard link`): valid for 10 minutes and once. Opening a
 * link only looks at it (`peek`); the page it opens posts it back to be redeemed, so neither a
 * cross-site navigation nor a mail scanner's prefetch signs anyone in or spends it. A link is
 * redeemed by one conditional update, so two clicks racing sign in one browser, not two. Links
 * are kept a day past their expiry so a late click is told "expired" or "used" rather than
 * "unknown".
 */
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import { isWellFormedToken, newSecretToken, tokenId } from './secret-token.ts';

export const LINK_TTL_MS = 10 * 60_000;
const KEPT_AFTER_EXPIRY_S = 24 * 3600;

interface LinkDoc {
  _id: string;
  workspaceId: string;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export const signInLinkIndexes: IndexDeclaration[] = [
  { collection: 'dashboardLinks', keys: { expiresAt: 1 }, options: { expireAfterSeconds: KEPT_AFTER_EXPIRY_S } },
];

export type Redemption = { ok: true; workspaceId: string } | { ok: false; reason: 'expired' | 'used' | 'unknown' };

export class SignInLinks {
  private readonly links: Collection<LinkDoc>;

  constructor(
    store: Store,
    private readonly publicUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.links = store.collection<LinkDoc>('dashboardLinks');
  }

  async issue(workspaceId: string): Promise<{ url: string; expiresAt: string }> {
    const token = newSecretToken();
    const now = this.now();
    const expiresAt = new Date(now + LINK_TTL_MS);
    await this.links.insertOne({ _id: tokenId(token), workspaceId, createdAt: new Date(now), expiresAt, usedAt: null });
    return { url: `${this.publicUrl}/dashboard/login?token=${token}`, expiresAt: expiresAt.toISOString() };
  }

  /** What redeeming the link would answer, without spending it. */
  async peek(token: unknown): Promise<Redemption> {
    if (!isWellFormedToken(token)) return { ok: false, reason: 'unknown' };
    const link = await this.links.findOne({ _id: tokenId(token) });
    if (!link) return { ok: false, reason: 'unknown' };
    if (link.usedAt) return { ok: false, reason: 'used' };
    if (link.expiresAt.getTime() <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, workspaceId: link.workspaceId };
  }

  async redeem(token: unknown): Promise<Redemption> {
    if (!isWellFormedToken(token)) return { ok: false, reason: 'unknown' };
    const _id = tokenId(token);
    const now = new Date(this.now());
    const link = await this.links.findOneAndUpdate(
      { _id, usedAt: null, expiresAt: { $gt: now } },
      { $set: { usedAt: now } },
      { returnDocument: 'after' },
    );
    if (link) return { ok: true, workspaceId: link.workspaceId };
    const seen = await this.links.findOne({ _id });
    if (!seen) return { ok: false, reason: 'unknown' };
    return { ok: false, reason: seen.usedAt ? 'used' : 'expired' };
  }
}
