/**
 * A workspace's own provider keys ("bring your own key"), encrypted at rest with AES-256-GCM under
 * the server secret, so that a copy of the store alone reveals none of them. Calls made with a
 * workspace's key cost it no data credits and draw on that key's own limiter.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Collection, IndexDeclaration, Store } from '../store/port.ts';

export interface ProviderKeyDoc {
  /** `${workspaceId}:${provider}`: one key per provider and workspace. */
  _id: string;
  workspaceId: string;
  provider: string;
  /** base64 of IV (12 bytes) + GCM tag (16) + ciphertext. */
  sealed: string;
  /** The first 12 hex digits of the key's SHA-256: tells keys apart without revealing them. */
  fingerprint: string;
  updatedAt: Date;
}

export const providerKeyIndexes: IndexDeclaration[] = [{ collection: 'provider_keys', keys: { workspaceId: 1 } }];

export const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12);

export class MissingSecretError extends Error {}

/**
 * The embedded store keeps its secret beside its data (mode 0600) when PROVIDER_KEY_SECRET is
 * unset; a shared MongoDB needs the variable on every instance, so there is no file fallback.
 */
export async function secretFile(dataDir: string): Promise<Buffer> {
  const file = path.join(dataDir, 'provider-keys.secret');
  try {
    const hex = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64}$/.test(hex)) return Buffer.from(hex, 'hex');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await writeFile(file, secret.toString('hex') + '\n', { mode: 0o600, flag: 'wx' }).catch(async (err) => {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  });
  await chmod(file, 0o600);
  return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
}

export class WorkspaceProviderKeys {
  private readonly collection: Collection<ProviderKeyDoc>;

  constructor(
    store: Store,
    private readonly secret: Buffer | undefined,
  ) {
    this.collection = store.collection<ProviderKeyDoc>('provider_keys');
  }

  async set(workspaceId: string, provider: string, key: string): Promise<{ provider: string; fingerprint: string }> {
    const sealed = this.seal(key, `${workspaceId}:${provider}`);
    const doc = { workspaceId, provider, sealed, fingerprint: fingerprint(key), updatedAt: new Date() };
    await this.collection.updateOne({ _id: `${workspaceId}:${provider}` }, { $set: doc }, { upsert: true });
    return { provider, fingerprint: doc.fingerprint };
  }

  async remove(workspaceId: string, provider: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: `${workspaceId}:${provider}` });
    return result.deletedCount === 1;
  }

  async list(workspaceId: string): Promise<Array<{ provider: string; fingerprint: string; updatedAt: Date }>> {
    const docs = await this.collection.find({ workspaceId }, { sort: { provider: 1 } }).toArray();
    return docs.map(({ provider, fingerprint, updatedAt }) => ({ provider, fingerprint, updatedAt }));
  }

  /** The workspace's keys by provider, decrypted. Without the secret there are none to use. */
  async keysFor(workspaceId: string): Promise<Map<string, string>> {
    if (!this.secret) return new Map();
    const docs = await this.collection.find({ workspaceId }).toArray();
    const keys = new Map<string, string>();
    for (const doc of docs) {
      // A key sealed under another secret (the secret was rotated) cannot be used: the service key serves instead.
      try {
        keys.set(doc.provider, this.open(doc.sealed, doc._id));
      } catch {
        continue;
      }
    }
    return keys;
  }

  private seal(key: string, context: string): string {
    if (!this.secret) throw new MissingSecretError('PROVIDER_KEY_SECRET must be set to store provider keys (32 bytes, hex or base64)');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.secret, iv);
    // Bound to its workspace and provider: a sealed key copied to another document does not open.
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(key, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  private open(sealed: string, context: string): string {
    const bytes = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.secret!, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  }
}
