/**
 * API keys of workspaces: creation, listing, revocation and the per-request lookup.
 *
 * Lookups are served from an in-process cache so a request does not pay a store round trip.
 * Revocation deletes the cache entry in this process at once and announces it on the
 * `onRevoke` hook, which main.ts wires to Redis pub/sub when several instances share a
 * MongoDB; without Redis another instance drops its cached entry after KEY_CACHE_SECONDS.
 * The embedded store is held by one process, so there revocation is always immediate.
 *
 * Each key has a name people give it and the time it was last used. The last use is written at
 * most once a minute per key (and only if no other instance wrote it meanwhile), so a busy key
 * costs no write per request; it is not part of the request, whose answer never waits for it.
 */
import { randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '../../shared/operations/types.ts';
import { MAX_KEY_NAME } from '../../shared/key-name.ts';
import { Lru } from '../lib/lru.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import { generateApiKey, hashApiKey, isWellFormedKey, keyHint } from './key-format.ts';

export interface ApiKeyDoc {
  _id: string;
  workspaceId: string;
  /** What people call it ("Sheets add-on", "CRM sync"); keys made before names existed have none. */
  name?: string;
  hash: string;
  hint: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  /** Last authenticated use, to the minute; absent until the first. */
  lastUsedAt?: Date | null;
  /** The member whose dashboard session created it, revoked when that member is removed. */
  createdByMember?: string;
}

export interface ApiKeyInfo {
  keyId: string;
  name: string;
  hint: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** A key just made: its secret is here and nowhere else. */
export interface NewApiKey {
  keyId: string;
  name: string;
  hint: string;
  scopes: Scope[];
  createdAt: string;
  apiKey: string;
}

export type Revocation = { outcome: 'revoked' | 'already_revoked'; revokedAt: Date } | { outcome: 'not_found' };

export const DEFAULT_KEY_NAME = 'API key';
/** How often a key's last use is written at most. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export const apiKeyIndexes: IndexDeclaration[] = [
  { collection: 'apiKeys', keys: { hash: 1 }, options: { unique: true } },
  { collection: 'apiKeys', keys: { workspaceId: 1 } },
];

const MAX_CACHE_ENTRIES = 10_000;

export class ApiKeys {
  private readonly keys: Collection<ApiKeyDoc>;
  /** Lookups by hash, null for a key that is unknown or revoked, for KEY_CACHE_SECONDS. */
  private readonly cache: Lru<string, ApiKeyDoc | null>;
  /** When this process last wrote each key's last use. */
  private readonly lastWritten = new Map<string, number>();
  /**
   * Called with the hash of every key revoked here, so other instances drop it too; awaited, so a
   * revocation answers only once Redis has handed the announcement to every instance, and a
   * request sent after the answer to another instance is refused there ("from the moment this
   * answers").
   */
  onRevoke: (hash: string) => Promise<void> | void = () => {};

  constructor(
    store: Store,
    cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = store.collection<ApiKeyDoc>('apiKeys');
    this.cache = new Lru(MAX_CACHE_ENTRIES, { ttlMs: cacheMs, now });
  }

  /**
   * Creates a key; by default with every scope (the interface: current keys grant every scope).
   * The name is trimmed; an empty one becomes {@link DEFAULT_KEY_NAME}.
   */
  async create(workspaceId: string, scopes: Scope[] = [...SCOPES], name = DEFAULT_KEY_NAME, createdByMember?: string): Promise<NewApiKey> {
    const trimmed = name.trim() || DEFAULT_KEY_NAME;
    if (trimmed.length > MAX_KEY_NAME) throw new RangeError(`a key name has at most ${MAX_KEY_NAME} characters`);
    const apiKey = generateApiKey();
    const doc: ApiKeyDoc = {
      _id: randomUUID(),
      workspaceId,
      name: trimmed,
      hash: hashApiKey(apiKey),
      hint: keyHint(apiKey),
      scopes,
      createdAt: new Date(this.now()),
      revokedAt: null,
      lastUsedAt: null,
      ...(createdByMember ? { createdByMember } : {}),
    };
    await this.keys.insertOne(doc);
    return { keyId: doc._id, name: trimmed, hint: doc.hint, scopes, createdAt: doc.createdAt.toISOString(), apiKey };
  }

  async list(workspaceId: string): Promise<ApiKeyInfo[]> {
    const docs = await this.keys.find({ workspaceId }, { sort: { createdAt: 1 } }).toArray();
    return docs.map((d) => ({
      keyId: d._id,
      name: d.name ?? DEFAULT_KEY_NAME,
      hint: d.hint,
      scopes: d.scopes,
      createdAt: d.createdAt.toISOString(),
      revokedAt: d.revokedAt ? d.revokedAt.toISOString() : null,
      lastUsedAt: d.lastUsedAt ? d.lastUsedAt.toISOString() : null,
    }));
  }

  /**
   * Revokes a key of the workspace. Of two concurrent revocations exactly one is `revoked`; the
   * other, like any later one, is `already_revoked` with the time of the first.
   */
  async revoke(workspaceId: string, keyId: string): Promise<Revocation> {
    const doc = await this.keys.findOneAndUpdate(
      { _id: keyId, workspaceId, revokedAt: null },
      { $set: { revokedAt: new Date(this.now()) } },
      { returnDocument: 'after' },
    );
    if (doc) {
      this.forget(doc.hash);
      await this.onRevoke(doc.hash);
      return { outcome: 'revoked', revokedAt: doc.revokedAt! };
    }
    const earlier = await this.keys.findOne({ _id: keyId, workspaceId });
    return earlier?.revokedAt ? { outcome: 'already_revoked', revokedAt: earlier.revokedAt } : { outcome: 'not_found' };
  }

  /** Whether the workspace's key is still active, read from the store (no cache): see still-acting.ts. */
  async isActive(keyId: string, workspaceId: string): Promise<boolean> {
    return (await this.keys.findOne({ _id: keyId, workspaceId, revokedAt: null })) !== null;
  }

  /** Revokes the workspace's active keys a member's session created; answers their ids. */
  async revokeCreatedBy(workspaceId: string, memberId: string): Promise<string[]> {
    const active = await this.keys.find({ workspaceId, createdByMember: memberId, revokedAt: null }).toArray();
    const revoked: string[] = [];
    for (const key of active) {
      if ((await this.revoke(workspaceId, key._id)).outcome === 'revoked') revoked.push(key._id);
    }
    return revoked;
  }

  /** Drops a cached lookup; used for local revocations and for announcements from other instances. */
  forget(hash: string): void {
    this.cache.delete(hash);
  }

  /** The active key record for a presented key, or null when it is malformed, unknown or revoked. */
  async authenticate(presented: string): Promise<ApiKeyDoc | null> {
    if (!isWellFormedKey(presented)) return null;
    const hash = hashApiKey(presented);
    let key = this.cache.get(hash);
    if (key === undefined) {
      const doc = await this.keys.findOne({ hash });
      key = doc && !doc.revokedAt ? doc : null;
      this.cache.set(hash, key);
    }
    if (key) this.noteUse(key._id, this.now());
    return key;
  }

  /** Writes a key's last use when this process has not in the last minute, and no other instance has either. */
  private noteUse(keyId: string, now: number): void {
    if (now - (this.lastWritten.get(keyId) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return;
    if (this.lastWritten.size >= MAX_CACHE_ENTRIES) this.lastWritten.clear();
    this.lastWritten.set(keyId, now);
    const at = new Date(now);
    const stale = new Date(now - LAST_USED_RESOLUTION_MS);
    // A bookkeeping write: the request does not wait for it, and a failure only leaves it older.
    this.keys
      .updateOne({ _id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $exists: false } }, { lastUsedAt: { $lte: stale } }] }, { $set: { lastUsedAt: at } })
      .catch(() => this.lastWritten.delete(keyId));
  }
}
