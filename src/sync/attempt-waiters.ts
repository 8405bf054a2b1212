/**
 * Callers waiting for a link's next attempt to finish: `associations/set` and `remove` answer with
 * the outcome of the attempt they queued when it comes within `setWaitMs`. Attempts are numbered as
 * they start; a waiter is answered only by an attempt that started after it began to wait, because
 * an attempt already running may not include the caller's change.
 */
import type { LinkRecord } from './types.js';

interface Waiter {
  fire: (l: LinkRecord | null | undefined) => void;
  /** The attempt number when the caller queued its change. */
  after: number;
}

/** Waiters by link key, and the count of attempts started. */
export class AttemptWaiters {
  private readonly waiters = new Map<string, Waiter[]>();
  private attemptNo = 0;

  /** The number of attempts started so far. */
  get mark(): number {
    return this.attemptNo;
  }

  /** Number the attempt starting now. */
  next(): number {
    return ++this.attemptNo;
  }

  /**
   * Resolve with the link after an attempt that started after `mark` completes (null when
   * dropped), or undefined after `ms`.
   */
  wait(link: string, ms: number, mark: number): Promise<LinkRecord | null | undefined> {
    return new Promise((resolve) => {
      const list = this.waiters.get(link) ?? [];
      let done = false;
      const fire = (l: LinkRecord | null | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(t);
        resolve(l);
      };
      const t = setTimeout(() => fire(undefined), ms);
      t.unref?.();
      list.push({ fire, after: mark });
      this.waiters.set(link, list);
    });
  }

  /** Attempt number `startNo` on `link` finished with `link` as stored (null: dropped or none). */
  settle(link: string, startNo: number, result: LinkRecord | null): void {
    const ws = this.waiters.get(link);
    if (!ws) return;
    const later = ws.filter((w) => w.after >= startNo);
    if (later.length) this.waiters.set(link, later);
    else this.waiters.delete(link);
    for (const w of ws) if (w.after < startNo) w.fire(result);
  }

  /** Answer every waiter with null (shutting down). */
  closeAll(): void {
    for (const ws of this.waiters.values()) for (const w of ws) w.fire(null);
    this.waiters.clear();
  }
}
