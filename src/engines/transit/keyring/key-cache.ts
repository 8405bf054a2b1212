/**
 * The cache of loaded keys: an unbounded map when `size` is 0, otherwise least-recently-used with
 * `size` entries (transit `cache-config`, reference transit-wire.md section 3.1.8).
 */
import { Lru } from '../../../storage/lru.js';

/** A map with optional LRU eviction (storage/lru.ts: a hit relinks a list node, no Map churn). */
export class KeyCache<V> {
  private readonly lru: Lru<string, V>;
  constructor(private limit = 0) {
    this.lru = new Lru<string, V>({ maxEntries: Math.max(0, limit) });
  }

  /** Configured size (0 = unbounded). */
  get size(): number {
    return this.limit;
  }

  /** Entries currently held. */
  get count(): number {
    return this.lru.size;
  }

  /** The value, marking it most recently used. */
  get(name: string): V | undefined {
    return this.limit > 0 ? this.lru.get(name) : this.lru.peek(name);
  }

  /** Store a value, evicting the least recently used when full. */
  set(name: string, value: V): void {
    this.lru.set(name, value);
  }

  /** Drop one entry. */
  delete(name: string): void {
    this.lru.delete(name);
  }

  /** True when held (does not touch recency). */
  has(name: string): boolean {
    return this.lru.has(name);
  }

  /** Change the size limit (0 = unbounded), evicting as needed. */
  resize(limit: number): void {
    this.limit = limit;
    this.lru.resize(Math.max(0, limit));
  }
}
