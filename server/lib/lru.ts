/**
 * The one in-process cache: a bounded map that forgets the least recently used entry first (a Map
 * keeps insertion order, so a hit moves its entry to the end), and, given `ttlMs`, an entry once it
 * is that old, so a lookup cached here is read again from the store after that long. Enough for
 * per-process caches of a few thousand entries.
 */
export interface LruOptions {
  /** How long an entry serves; unset: until it is evicted or deleted. */
  ttlMs?: number;
  /** The clock the age is read on. @default Date.now */
  now?: () => number;
}

export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; expiresAt: number }>();
  private readonly ttlMs: number | undefined;
  private readonly now: () => number;

  constructor(
    private readonly max: number,
    { ttlMs, now = Date.now }: LruOptions = {},
  ) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  get(key: K): V | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    this.map.delete(key);
    if (this.ttlMs !== undefined && entry.expiresAt <= this.now()) return undefined;
    this.map.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.max <= 0) return;
    this.map.delete(key);
    this.map.set(key, { value, expiresAt: this.ttlMs === undefined ? Infinity : this.now() + this.ttlMs });
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}
