/**
 * One copy of each repeated string in the documents an import writes. A million establishments
 * repeat dates, codes, descriptions, districts, states and search words over and over; stored
 * once each, they took half the memory of the documents holding them (strings were 1 KiB of
 * the 2.3 KiB a document cost).
 */

/** Fields unique to each establishment, which sharing would only add to the pool. */
const UNIQUE = new Set(['_id', 'cnpj', 'root', 'name', 'tradeName', 'email', 'phones', 'street']);
const LONGEST = 64;

export class Interner {
  private pool = new Map<string, string>();

  /** `limit` bounds the pool; past it the pool starts over, which only loses some sharing. */
  constructor(private readonly limit = 2_000_000) {}

  /** Replaces, in place, every shareable string of a freshly built document with its pooled copy. */
  shareStrings<T extends object>(doc: T): T {
    this.walk(doc as Record<string, unknown>, true);
    return doc;
  }

  private walk(value: Record<string, unknown> | unknown[], top: boolean): void {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.shared(value[i]);
      return;
    }
    for (const key in value) {
      if (top && UNIQUE.has(key)) continue;
      value[key] = this.shared(value[key]);
    }
  }

  private shared(value: unknown): unknown {
    if (typeof value === 'string') return value.length > LONGEST ? value : this.share(value);
    if (typeof value === 'object' && value !== null) this.walk(value as Record<string, unknown>, false);
    return value;
  }

  private share(text: string): string {
    const pooled = this.pool.get(text);
    if (pooled !== undefined) return pooled;
    if (this.pool.size >= this.limit) this.pool = new Map();
    this.pool.set(text, text);
    return text;
  }
}
