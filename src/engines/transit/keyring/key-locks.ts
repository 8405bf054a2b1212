/**
 * Per-key reader/writer locks (reference transit-wire.md section 7.4: reads share, rotate/config/trim/
 * import/restore take the exclusive lock). Writers are not starved: once a writer waits, new readers queue.
 */

interface LockState {
  readers: number;
  writer: boolean;
  queue: { mode: 'shared' | 'exclusive'; wake: () => void }[];
}

/** Idle entries kept before a prune (one per recently used key name). */
const KEEP_IDLE = 1024;

/**
 * A table of named async reader/writer locks. Idle entries stay (and are pruned once there are more
 * than KEEP_IDLE): deleting one after every request made V8 reallocate the map's table each time, in
 * old space, since the map is long-lived; at 30,000 requests/s that garbage forced a full GC every
 * ~1.5 s and showed in the p99 latency.
 */
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
    const s = this.entry(name);
    const free =
      mode === 'shared' ? !s.writer && s.queue.length === 0 : !s.writer && s.readers === 0 && s.queue.length === 0;
    if (!free) return false;
    if (mode === 'shared') s.readers++;
    else s.writer = true;
    return true;
  }

  /** Number of names with a held or awaited lock (tests). */
  get size(): number {
    let n = 0;
    for (const s of this.locks.values()) if (!idle(s)) n++;
    return n;
  }

  /** Entries kept, idle ones included (tests: the table stays bounded). */
  get tracked(): number {
    return this.locks.size;
  }

  /** The entry of `name`, created (after pruning idle entries when there are many) if absent. */
  private entry(name: string): LockState {
    let s = this.locks.get(name);
    if (!s) {
      if (this.locks.size >= KEEP_IDLE) for (const [k, v] of this.locks) if (idle(v)) this.locks.delete(k);
      s = { readers: 0, writer: false, queue: [] };
      this.locks.set(name, s);
    }
    return s;
  }

  private acquire(name: string, mode: 'shared' | 'exclusive'): Promise<void> {
    const s = this.entry(name);
    const free =
      mode === 'shared' ? !s.writer && s.queue.length === 0 : !s.writer && s.readers === 0 && s.queue.length === 0;
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
    // An idle entry stays for the next request (see the class comment).
  }
}

function idle(s: LockState): boolean {
  return s.readers === 0 && !s.writer && s.queue.length === 0;
}
