/**
 * API keys of workspaces: creation, listing, revocation and the per-request lookup.
 *
 * Lookups are served from an in-process cache so a request does not pay a store round trip.
 * Revocation deletes the cache entry in this process at once and announces it on the
 * `onRevoke` hook, which main.ts wires to Redis pub/sub when several instances share a
 * MongoDB; without Redis another instance drops its cached entry after KEY_CACHE_SECONDS.
 * The embedded store is held by one process, so there revocation is always immediate.
 */
import { randomUUID } from 'node:crypto';
import { SCOPES, type Scope } from '../../shared/operations/types.ts';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';
import { generateApiKey, hashApiKey, isWellFormedKey, keyHint } from './key-format.ts';

export interface ApiKeyDoc {
  _id: string;
  workspaceId: string;
  hash: string;
  hint: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

export interface ApiKeyInfo {
  keyId: string;
  hint: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export const apiKeyIndexes: IndexDeclaration[] = [
  { collection: 'apiKeys', keys: { hash: 1 }, options: { unique: true } },
  { collection: 'apiKeys', keys: { workspaceId: 1 } },
];

interface CacheEntry {
  key: ApiKeyDoc | null;
  expiresAt: number;
}

const MAX_CACHE_ENTRIES = 10_000;

export class ApiKeys {
  private readonly keys: Collection<ApiKeyDoc>;
  private readonly cache = new Map<string, CacheEntry>();
  /** Called with the hash of every key revoked here, so other instances can drop it too. */
  onRevoke: (hash: string) => void = () => {};

  constructor(
    store: Store,
    private readonly cacheMs: number,
  ) {
    this.keys = store.collection<ApiKeyDoc>('apiKeys');
  }

  /** Creates a key; by default with every scope (the interface: current keys grant every scope). */
  async create(workspaceId: string, scopes: Scope[] = [...SCOPES]): Promise<{ keyId: string; apiKey: string }> {
    const apiKey = generateApiKey();
    const doc: ApiKeyDoc = {
      _id: randomUUID(),
      workspaceId,
      hash: hashApiKey(apiKey),
      hint: keyHint(apiKey),
      scopes,
      createdAt: new Date(),
      revokedAt: null,
    };
    await this.keys.insertOne(doc);
    return { keyId: doc._id, apiKey };
  }

  async list(workspaceId: string): Promise<ApiKeyInfo[]> {
    const docs = await this.keys.find({ workspaceId }, { sort: { createdAt: 1 } }).toArray();
    return docs.map((d) => ({
      keyId: d._id,
      hint: d.hint,
      scopes: d.scopes,
      createdAt: d.createdAt.toISOString(),
      revokedAt: d.revokedAt ? d.revokedAt.toISOString() : null,
    }));
  }

  /** Returns false when the workspace has no such key. Revoking twice is harmless. */
  async revoke(workspaceId: string, keyId: string): Promise<boolean> {
    const doc = await this.keys.findOneAndUpdate(
      { _id: keyId, workspaceId },
      { $set: { revokedAt: new Date() } },
      { returnDocument: 'after' },
    );
    if (!doc) return false;
    this.forget(doc.hash);
    this.onRevoke(doc.hash);
    return true;
  }

  /** Drops a cached lookup; used for local revocations and for announcements from other instances. */
  forget(hash: string): void {
    this.cache.delete(hash);
  }

  /** The active key record for a presented key, or null when it is malformed, unknown or revoked. */
  async authenticate(presented: string): Promise<ApiKeyDoc | null> {
    if (!isWellFormedKey(presented)) return null;
    const hash = hashApiKey(presented);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.key;
    const doc = await this.keys.findOne({ hash });
    const key = doc && !doc.revokedAt ? doc : null;
    if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
    this.cache.set(hash, { key, expiresAt: now + this.cacheMs });
    return key;
  }
}
