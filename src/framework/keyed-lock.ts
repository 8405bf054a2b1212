/** Per-key mutual exclusion for async work (one writer per KV secret path, one sync link at a time), as Vault's locksutil. */

/** A mutex per key; waiting callers queue in order; idle keys are forgotten. */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `fn` while holding the lock for `key`. */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Number of keys with a holder or waiters (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
