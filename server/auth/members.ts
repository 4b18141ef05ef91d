/**
 * Members: which workspace an OAuth subject (`iss`, `sub`) acts for. One document per subject,
 * unique on (iss, sub), so a subject has one workspace and two first requests racing to sign it
 * up cannot both win (subjects.ts). Removing a member keeps its document, marked removed, the way
 * a revoked key stays listed: otherwise automatic sign-up would hand the removed subject a fresh
 * workspace on its next request.
 *
 * Lookups are cached in-process for KEY_CACHE_SECONDS, like API keys, and a change (add or
 * remove) drops the entry here at once and is announced on the `onChange` hook, which bootstrap.ts
 * wires to Redis pub/sub so other instances drop it too. Through the control socket, the CLI's
 * change runs in the server's own process, so on the embedded store it is always immediate.
 */
import { randomUUID } from 'node:crypto';
import { Lru } from '../lib/lru.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';

export interface MemberDoc {
  _id: string;
  iss: string;
  sub: string;
  workspaceId: string;
  /** `signup`: created by a token's first request; `cli`: linked by an operator. */
  source: 'signup' | 'cli';
  /** False while a sign-up has claimed the subject but its workspace may not exist yet. */
  ready: boolean;
  createdAt: Date;
  removedAt: Date | null;
}

export interface MemberInfo {
  memberId: string;
  issuer: string;
  subject: string;
  workspaceId: string;
  source: 'signup' | 'cli';
  createdAt: string;
  removedAt: string | null;
}

export const memberIndexes: IndexDeclaration[] = [
  { collection: 'members', keys: { iss: 1, sub: 1 }, options: { unique: true } },
  { collection: 'members', keys: { workspaceId: 1 } },
];

export type AddResult = { added: MemberDoc } | { alreadyIn: string };

const MAX_CACHE_ENTRIES = 10_000;

/** The cache key of a subject; also what `onChange` announces. */
export function subjectKey(iss: string, sub: string): string {
  return JSON.stringify([iss, sub]);
}

export class Members {
  readonly collection: Collection<MemberDoc>;
  /** Lookups by subject, for KEY_CACHE_SECONDS. */
  private readonly cache: Lru<string, MemberDoc | null>;
  /**
   * Called with the subject key of every member added or removed here, and awaited: the change
   * answers only once the other instances have been told (see ApiKeys.onRevoke).
   */
  onChange: (key: string) => Promise<void> | void = () => {};

  constructor(store: Store, cacheMs: number) {
    this.collection = store.collection<MemberDoc>('members');
    this.cache = new Lru(MAX_CACHE_ENTRIES, { ttlMs: cacheMs });
  }

  /** The subject's document (removed or not), or null; served from the cache when recent. */
  async find(iss: string, sub: string): Promise<MemberDoc | null> {
    const key = subjectKey(iss, sub);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const member = await this.collection.findOne({ iss, sub });
    // A sign-up still under way is not cached: the next request must see it finish.
    if (member?.ready !== false) this.cache.set(key, member);
    return member;
  }

  /**
   * Links a subject to a workspace, or re-links a removed one. A subject active in another
   * workspace stays there (`alreadyIn`): moving it silently would move its caller's data access.
   */
  async add(iss: string, sub: string, workspaceId: string): Promise<AddResult> {
    const now = new Date();
    const doc: MemberDoc = { _id: randomUUID(), iss, sub, workspaceId, source: 'cli', ready: true, createdAt: now, removedAt: null };
    let result: AddResult;
    try {
      await this.collection.insertOne(doc);
      result = { added: doc };
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const revived = await this.collection.findOneAndUpdate(
        { iss, sub, $or: [{ removedAt: { $ne: null } }, { workspaceId }] },
        { $set: { workspaceId, source: 'cli', ready: true, removedAt: null } },
        { returnDocument: 'after' },
      );
      if (!revived) {
        const current = await this.collection.findOne({ iss, sub });
        return { alreadyIn: current?.workspaceId ?? 'another workspace' };
      }
      result = { added: revived };
    }
    await this.changed(iss, sub);
    return result;
  }

  /**
   * Claims an unknown subject for a workspace about to be created (sign-up). The unique index
   * decides between racing claims: the loser gets null and must follow the winner's document.
   */
  async claim(iss: string, sub: string, workspaceId: string): Promise<MemberDoc | null> {
    const doc: MemberDoc = { _id: randomUUID(), iss, sub, workspaceId, source: 'signup', ready: false, createdAt: new Date(), removedAt: null };
    try {
      await this.collection.insertOne(doc);
      return doc;
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
  }

  /**
   * The claimed workspace exists: the sign-up is complete. Lookups that cached the subject as
   * unknown before it (here or in another instance) would send its next requests through sign-up
   * again, so they are dropped.
   */
  async markReady(member: Pick<MemberDoc, '_id' | 'iss' | 'sub'>): Promise<void> {
    await this.collection.updateOne({ _id: member._id }, { $set: { ready: true } });
    await this.changed(member.iss, member.sub);
  }

  /** Reads past the cache (a sign-up following another process's claim). */
  fresh(iss: string, sub: string): Promise<MemberDoc | null> {
    return this.collection.findOne({ iss, sub });
  }

  /**
   * Whether the member is still active in the workspace, read from the store past the cache: a
   * dashboard session asks on every request, so a removal ends it at once in every instance.
   */
  async isActive(memberId: string, workspaceId: string): Promise<boolean> {
    return (await this.collection.findOne({ _id: memberId, workspaceId, removedAt: null })) !== null;
  }

  /** Marks the subject removed from the workspace; false when it is not an active member there. */
  async remove(iss: string, sub: string, workspaceId: string): Promise<boolean> {
    const doc = await this.collection.findOneAndUpdate(
      { iss, sub, workspaceId, removedAt: null },
      { $set: { removedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (!doc) return false;
    await this.changed(iss, sub);
    return true;
  }

  async list(workspaceId: string): Promise<MemberInfo[]> {
    const docs = await this.collection.find({ workspaceId }, { sort: { createdAt: 1, sub: 1, iss: 1 } }).toArray();
    return docs.map(memberInfo);
  }

  /** Drops a cached lookup; for changes made here and for announcements from other instances. */
  forget(key: string): void {
    this.cache.delete(key);
  }

  private async changed(iss: string, sub: string): Promise<void> {
    const key = subjectKey(iss, sub);
    this.forget(key);
    await this.onChange(key);
  }
}

export function memberInfo(d: MemberDoc): MemberInfo {
  return {
    memberId: d._id,
    issuer: d.iss,
    subject: d.sub,
    workspaceId: d.workspaceId,
    source: d.source,
    createdAt: d.createdAt.toISOString(),
    removedAt: d.removedAt ? d.removedAt.toISOString() : null,
  };
}

