/**
 * Per-key reader/writer locks (reference transit-wire.md section 7.4: reads share, rotate/config/trim/
 * import/restore take the exclusive lock). Writers are not starved: once a writer waits, new readers queue.
 */

interface LockState {
  readers: number;
  writer: boolean;
  queue: { mode: 'shared' | 'exclusive'; wake: () => void }[];
}

/** A table of named async reader/writer locks; idle entries are dropped. */
export class KeyLocks {
  private readonly locks = new Map<string, LockState>();

  /** Run `fn` holding the lock of `name` in `mode`. Not re-entrant. */
  with<T>(name: string, mode: 'shared' | 'exclusive', fn: () => Promise<T>): Promise<T> {
    // Uncontended (the common case): take the lock now instead of awaiting an already-resolved promise.
    if (this.tryAcquire(name, mode)) return this.run(name, mode, fn);
    return this.acquire(name, mode).then(() => this.run(name, mode, fn));
  }

  private run<T>(name: string, mode: 'shared' | 'exclusive', fn: () => Promise<T>): Promise<T> {
    let p: Promise<T>;
    try {
      p = fn();
    } catch (e) {
      this.release(name, mode);
      return Promise.reject(e as Error);
    }
    return p.then(
      (v) => {
        this.release(name, mode);
        return v;
      },
      (e: unknown) => {
        this.release(name, mode);
        throw e;
      },
    );
  }

  private tryAcquire(name: string, mode: 'shared' | 'exclusive'): boolean {
    let s = this.locks.get(name);
    if (!s) {
      s = { readers: 0, writer: false, queue: [] };
      this.locks.set(name, s);
    }
    const free = mode === 'shared' ? !s.writer && s.queue.length === 0 : !s.writer && s.readers === 0 && s.queue.length === 0;
    if (!free) return false;
    if (mode === 'shared') s.readers++;
    else s.writer = true;
    return true;
  }

  /** Number of names with a held or awaited lock (tests). */
  get size(): number {
    return this.locks.size;
  }

  private acquire(name: string, mode: 'shared' | 'exclusive'): Promise<void> {
    let s = this.locks.get(name);
    if (!s) {
      s = { readers: 0, writer: false, queue: [] };
      this.locks.set(name, s);
    }
    const free = mode === 'shared' ? !s.writer && s.queue.length === 0 : !s.writer && s.readers === 0 && s.queue.length === 0;
    if (free) {
      if (mode === 'shared') s.readers++;
      else s.writer = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => s.queue.push({ mode, wake: resolve }));
  }

  private release(name: string, mode: 'shared' | 'exclusive'): void {
    const s = this.locks.get(name);
    if (!s) return;
    if (mode === 'shared') s.readers--;
    else s.writer = false;
    while (s.queue.length > 0 && !s.writer) {
      const next = s.queue[0]!;
      if (next.mode === 'exclusive') {
        if (s.readers > 0) break;
        s.queue.shift();
        s.writer = true;
        next.wake();
        break;
      }
      s.queue.shift();
      s.readers++;
      next.wake();
    }
    if (s.readers === 0 && !s.writer && s.queue.length === 0) this.locks.delete(name);
  }
}
