/**
 * Enrichment memory (decisions.md, "Enrichment: never paid twice"): what the cascade found for a
 * subject, kept per workspace, so that asking again within `maxAge` is answered from here,
 * charged nothing and calling nobody. A subject is its identifiers, normalized (the same person
 * sent as `Ana@Acme.com` or `ana@acme.com` is one subject); the document's id hashes them with
 * the workspace, so one workspace's answers can never be read under another's.
 *
 * Each field keeps when it was found, by whom, at what price and with what confidence; each
 * field the cascade looked for and could not find keeps when it looked, so a field nobody has is
 * not paid for with another round of calls either. A not-found is kept only under the identifiers
 * exactly as the providers were sent them (`asked`), and for 7 days at most: a profile URL with a
 * query string that nobody knew says nothing of the canonical URL, which the subject's id shares.
 * Documents expire through a TTL index at the largest `maxAge` after their last write.
 *
 * Two identical requests at once call the providers once: in a process, the others wait for the
 * one running; on MongoDB, where other instances may share the store, the first also claims the
 * subject (a lease on the document), and the others wait for the claim. The embedded store has
 * one process, so it spares those writes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { foldText } from '../../shared/fold-text.ts';
import { isDuplicateKeyError, type Collection, type IndexDeclaration, type Store } from '../store/port.ts';
import type { Field, FieldValues } from '../providers/fields.ts';
import { normalizeDomain } from './enrich-record.ts';

/** The largest `maxAge` a request may ask for, and how long a stored answer is kept. */
export const MAX_AGE_SECONDS = 31_536_000;
export const DEFAULT_MAX_AGE_SECONDS = 2_592_000;
/** How long a claim keeps identical requests waiting; past it (its process died) another may run. */
const CLAIM_MS = 30_000;
/** How often a request waiting on another instance's claim looks again. */
const POLL_MS = 50;
/** How long a not-found answers for the identifiers it was asked with (decisions.md: at most 7 days). */
export const MISS_MAX_AGE_MS = 7 * 86_400_000;
/** How long savings counts gather before they are written. */
const SAVINGS_FLUSH_MS = 200;

const COLLECTION = 'enrichMemory';
const SAVINGS = 'enrichSavings';

export interface StoredField {
  value: unknown;
  source: string;
  at: Date;
  /** What it cost when it was paid for (0 with the workspace's own key). */
  cost: number;
  confidence?: number;
}

export interface MemoryDoc {
  _id: string;
  workspaceId: string;
  fields: Partial<Record<Field, StoredField>>;
  /** By the identifiers as sent (`asked`): the fields looked for and not found, and when. */
  tried: Record<string, Partial<Record<Field, Date>>>;
  updatedAt: Date;
  claim?: { id: string; until: Date };
}

interface SavingsDoc {
  _id: string;
  workspaceId: string;
  month: string;
  credits: number;
  answers: number;
}

export const enrichMemoryIndexes: IndexDeclaration[] = [
  { collection: COLLECTION, keys: { updatedAt: 1 }, options: { expireAfterSeconds: MAX_AGE_SECONDS } },
  { collection: SAVINGS, keys: { workspaceId: 1 } },
];

/** A LinkedIn profile as one string however it was pasted: `linkedin.com/in/ana-souza`. */
export function canonicalLinkedin(url: string): string {
  const bare = url.trim().toLowerCase().replace(/^[a-z]+:\/\//, '').replace(/^([a-z]{2,3}|www|m)\./, '');
  return bare.split(/[?#]/)[0]!.replace(/\/+$/, '');
}

const NORMALIZE: Partial<Record<Field, (value: string) => string>> = {
  email: (v) => v.trim().toLowerCase(),
  personalEmail: (v) => v.trim().toLowerCase(),
  linkedinUrl: canonicalLinkedin,
  phone: (v) => v.replace(/\D/g, ''),
  cnpj: (v) => v.replace(/[^0-9A-Za-z]/g, '').toUpperCase(),
  fullName: foldText,
  companyName: foldText,
  companyDomain: normalizeDomain,
};

/** The subject's identifiers, normalized and in a fixed order. */
export function subjectOf(known: FieldValues): string {
  const parts: string[] = [];
  for (const [field, normalize] of Object.entries(NORMALIZE) as Array<[Field, (v: string) => string]>) {
    const value = known[field];
    if (typeof value === 'string' && value.trim() !== '') parts.push(`${field}=${normalize(value)}`);
  }
  return parts.join('\n');
}

/**
 * The identifiers as the cascade sends them to the providers (cleaned), hashed: what a not-found
 * is an answer to. Only case and spacing are set aside, which no provider's match turns on; what
 * the subject's normalization drops beyond that (a URL's query, its subdomain, accents, a phone's
 * punctuation) the provider did read, so it tells two questions apart.
 */
export function askedOf(known: FieldValues): string {
  const parts: string[] = [];
  for (const field of Object.keys(NORMALIZE) as Field[]) {
    const value = known[field];
    if (typeof value === 'string' && value.trim() !== '') parts.push(`${field}=${value.trim().replace(/\s+/g, ' ').toLowerCase()}`);
  }
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 32);
}

/** Where a subject's answers are kept: its document, and the identifiers as asked. */
export interface MemoryKey {
  id: string;
  asked: string;
}

/** What the memory holds for a request: the fresh fields, and which wanted fields it covers. */
export interface Recall {
  fields: Partial<Record<Field, StoredField>>;
  /** Wanted fields the memory answers: found, or looked for in vain, within `maxAge`. */
  covered: Field[];
  /** When the oldest answer given was paid for. */
  enrichedAt: Date | null;
}

export class EnrichMemory {
  private readonly docs: Collection<MemoryDoc>;
  private readonly savings: Collection<SavingsDoc>;
  /** Runs in this process, by subject id: identical requests wait for the one running. */
  private readonly running = new Map<string, Promise<unknown>>();
  /** Savings counted and not written yet, by counter id, and the write that will take them. */
  private readonly unsaved = new Map<string, { workspaceId: string; month: string; credits: number; answers: number }>();
  private flushing: Promise<void> | undefined;
  /** Whether other processes may enrich in the same store (MongoDB): then a claim document is needed. */
  private readonly shared: boolean;

  constructor(store: Store, private readonly now: () => number = Date.now) {
    this.docs = store.collection<MemoryDoc>(COLLECTION);
    this.savings = store.collection<SavingsDoc>(SAVINGS);
    this.shared = store.kind !== 'embedded';
  }

  idOf(workspaceId: string, subject: string): string {
    return createHash('sha256').update(`${workspaceId}\n${subject}`).digest('hex');
  }

  /** The key of the subject these identifiers (cleaned) name; null when they name none. */
  keyOf(workspaceId: string, known: FieldValues): MemoryKey | null {
    const subject = subjectOf(known);
    return subject === '' ? null : { id: this.idOf(workspaceId, subject), asked: askedOf(known) };
  }

  /**
   * The fields stored for the subject that are at most `maxAge` seconds old, and the wanted
   * fields it answers: found within `maxAge`, or not found for these very identifiers within
   * `maxAge` and 7 days.
   */
  async recall({ id, asked }: MemoryKey, workspaceId: string, goals: readonly Field[], maxAge: number): Promise<Recall> {
    const doc = await this.docs.findOne({ _id: id, workspaceId });
    const since = this.now() - maxAge * 1000;
    const missedSince = Math.max(since, this.now() - MISS_MAX_AGE_MS);
    const fields: Recall['fields'] = {};
    const covered: Field[] = [];
    let oldest: number | null = null;
    if (doc && maxAge > 0) {
      for (const [field, stored] of Object.entries(doc.fields ?? {}) as Array<[Field, StoredField]>) {
        if (new Date(stored.at).getTime() >= since) fields[field] = stored;
      }
      const missed = doc.tried?.[asked] ?? {};
      for (const goal of goals) {
        const found = fields[goal]?.at;
        const at = found !== undefined ? new Date(found).getTime() : missed[goal] !== undefined ? new Date(missed[goal]!).getTime() : null;
        if (at === null || at < (found !== undefined ? since : missedSince)) continue;
        covered.push(goal);
        oldest = Math.min(oldest ?? Infinity, at);
      }
    }
    return { fields, covered, enrichedAt: oldest === null ? null : new Date(oldest) };
  }

  /**
   * Runs `work` for the subject while no identical request runs: in this process by waiting for
   * the one running, across instances by a claim on the document.
   */
  async exclusive<T>({ id }: MemoryKey, workspaceId: string, work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    for (;;) {
      const ahead = this.running.get(id);
      if (!ahead) break;
      await ahead.catch(() => undefined);
    }
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.running.set(id, mine);
    const claimId = randomUUID();
    try {
      if (!this.shared) return await work();
      await this.claim(id, workspaceId, claimId, signal);
      try {
        return await work();
      } finally {
        await this.docs.updateOne({ _id: id, 'claim.id': claimId }, { $unset: { claim: '' } }).catch(() => undefined);
      }
    } finally {
      this.running.delete(id);
      release();
    }
  }

  /** Takes the subject's claim, waiting while another instance holds a live one. */
  private async claim(id: string, workspaceId: string, claimId: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const now = this.now();
      try {
        await this.docs.updateOne(
          { _id: id, $or: [{ claim: { $exists: false } }, { 'claim.until': { $lte: new Date(now) } }] },
          {
            $set: { claim: { id: claimId, until: new Date(now + CLAIM_MS) }, workspaceId },
            $setOnInsert: { fields: {}, tried: {}, updatedAt: new Date(now) },
          },
          { upsert: true },
        );
        return;
      } catch (err) {
        // The document exists with a live claim: another instance is enriching this subject.
        if (!isDuplicateKeyError(err)) throw err;
      }
      if (signal.aborted) throw signal.reason;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Keeps what a cascade found, and the wanted fields it looked for in vain (under the identifiers as asked), as of `at`. */
  async store(
    { id, asked }: MemoryKey,
    workspaceId: string,
    found: Partial<Record<Field, StoredField>>,
    triedInVain: readonly Field[],
    at: Date,
  ): Promise<void> {
    const set: Record<string, unknown> = { workspaceId, updatedAt: new Date(this.now()) };
    for (const [field, stored] of Object.entries(found)) set[`fields.${field}`] = stored;
    for (const field of triedInVain) set[`tried.${asked}.${field}`] = at;
    await this.docs.updateOne({ _id: id }, { $set: set }, { upsert: true });
  }

  /** Drops what is stored for the subject: what a request stored, then could not charge for, must not be given free. */
  async forget({ id }: MemoryKey, workspaceId: string): Promise<void> {
    await this.docs.deleteOne({ _id: id, workspaceId });
  }

  /**
   * Counts what an answer from memory spared the workspace, this month. Counts are gathered for
   * a moment and written as one `$inc` per workspace, so a run of cached answers costs a few
   * writes, not one each; the promise settles once this count is written.
   */
  saved(workspaceId: string, credits: number): Promise<void> {
    const month = new Date(this.now()).toISOString().slice(0, 7);
    const key = `${workspaceId}:${month}`;
    const entry = this.unsaved.get(key) ?? { workspaceId, month, credits: 0, answers: 0 };
    entry.credits += credits;
    entry.answers += 1;
    this.unsaved.set(key, entry);
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, SAVINGS_FLUSH_MS)).then(() => this.flushSavings());
    return this.flushing;
  }

  private async flushSavings(): Promise<void> {
    const batch = [...this.unsaved];
    this.unsaved.clear();
    this.flushing = undefined;
    await Promise.all(
      batch.map(([_id, { workspaceId, month, credits, answers }]) =>
        this.savings.updateOne({ _id }, { $inc: { credits, answers }, $setOnInsert: { workspaceId, month } }, { upsert: true }),
      ),
    );
  }

  /** The credits the memory saved the workspace this month, and how many answers it gave. */
  async savedThisMonth(workspaceId: string): Promise<{ month: string; credits: number; answers: number }> {
    const month = new Date(this.now()).toISOString().slice(0, 7);
    const doc = await this.savings.findOne({ _id: `${workspaceId}:${month}` });
    return { month, credits: doc?.credits ?? 0, answers: doc?.answers ?? 0 };
  }
}
