/**
 * The cache of loaded keys: an unbounded map when `size` is 0, otherwise least-recently-used with
 * `size` entries (transit `cache-config`, reference transit-wire.md section 3.1.8).
 */

/** A map with optional LRU eviction (Map keeps insertion order; a hit re-inserts the entry). */
export class KeyCache<V> {
  private readonly map = new Map<string, V>();
  constructor(private limit = 0) {}

  /** Configured size (0 = unbounded). */
  get size(): number {
    return this.limit;
  }

  /** Entries currently held. */
  get count(): number {
    return this.map.size;
  }

  /** The value, marking it most recently used. */
  get(name: string): V | undefined {
    const v = this.map.get(name);
    if (v !== undefined && this.limit > 0) {
      this.map.delete(name);
      this.map.set(name, v);
    }
    return v;
  }

  /** Store a value, evicting the least recently used when full. */
  set(name: string, value: V): void {
    this.map.delete(name);
    this.map.set(name, value);
    this.evict();
  }

  /** Drop one entry. */
  delete(name: string): void {
    this.map.delete(name);
  }

  /** True when held (does not touch recency). */
  has(name: string): boolean {
    return this.map.has(name);
  }

  /** Change the size limit (0 = unbounded), evicting as needed. */
  resize(limit: number): void {
    this.limit = limit;
    this.evict();
  }

  private evict(): void {
    if (this.limit <= 0) return;
    while (this.map.size > this.limit) {
      const oldest = this.map.keys().next().value as string;
      this.map.delete(oldest);
    }
  }
}
