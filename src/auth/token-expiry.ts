/**
 * When tokens expire (the token half of Vault's expiration manager): a min-heap of expiry times with
 * one timer set to the earliest. At its time the token store re-reads the token under its lock and
 * revokes it if it is still due (revocation takes its children), so an expired token ends whether or
 * not anyone looks it up. Only the node that may write (a single daemon, or a cluster's active) runs
 * it; the token store fills it from storage when it becomes that node, so expiry survives restarts.
 *
 * Entries are never removed from the heap: a renewal pushes the new time and `latest` says which
 * entry of a token is current, so stale ones are skipped when they surface.
 */
import type { Clock } from '../framework/context.js';

/** Longest single timer: setTimeout overflows past 2^31-1 ms (~24.8 days); later ones re-arm. */
const MAX_TIMER_MS = 3_600_000;

interface Due {
  at: number;
  hash: string;
}

/** A min-heap of due times with one timer; `onDue` runs for each token whose time came. */
export class ExpiryQueue {
  private heap: Due[] = [];
  /** The current due time (ms) of each scheduled token. */
  private readonly latest = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private running: Promise<void> | null = null;
  private active = false;
  /** Bumped by activate/deactivate: work begun under an earlier activation stops scheduling. */
  private epoch = 0;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (hash: string) => Promise<void>,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** True while this node runs expiry. */
  isActive(): boolean {
    return this.active;
  }

  /** Start running expiry; returns the epoch a filling scan must pass to `schedule`. */
  activate(): number {
    this.deactivate();
    this.active = true;
    return ++this.epoch;
  }

  /** Stop: forget every scheduled time (another node, or the next activation, takes over). */
  deactivate(): void {
    this.active = false;
    this.epoch++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    this.heap = [];
    this.latest.clear();
  }

  /** Number of tokens scheduled (tests, metrics). */
  get size(): number {
    return this.latest.size;
  }

  /** Expire `hash` at `atMs` (Unix ms); no-op while inactive or when `epoch` is stale. */
  schedule(hash: string, atMs: number, epoch = this.epoch): void {
    if (!this.active || epoch !== this.epoch || !(atMs > 0)) return;
    this.latest.set(hash, atMs);
    this.push({ at: atMs, hash });
    if (atMs < this.timerAt) this.arm();
  }

  /** Forget a token's due time (revoked). */
  unschedule(hash: string): void {
    this.latest.delete(hash);
  }

  /** Run `onDue` for every token due now (the timer calls this; tests may too). */
  async runDue(): Promise<void> {
    // One pass at a time: a timer firing during a long cascade waits for it.
    while (this.running) await this.running;
    this.running = this.drain().finally(() => (this.running = null));
    await this.running;
    if (this.active) this.arm();
  }

  private async drain(): Promise<void> {
    const epoch = this.epoch;
    for (;;) {
      const top = this.heap[0];
      if (!top || top.at > this.clock.now() || epoch !== this.epoch) return;
      this.pop();
      if (this.latest.get(top.hash) !== top.at) continue; // renewed since, or revoked
      this.latest.delete(top.hash);
      try {
        await this.onDue(top.hash);
      } catch (e) {
        this.onError(e);
      }
    }
  }

  /** Set the timer to the earliest due time. */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    const top = this.heap[0];
    if (!top || !this.active) return;
    const delay = Math.max(0, Math.min(top.at - this.clock.now(), MAX_TIMER_MS));
    this.timerAt = top.at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.runDue().catch(this.onError);
    }, delay);
    this.timer.unref();
  }

  private push(d: Due): void {
    const h = this.heap;
    h.push(d);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.at <= h[i]!.at) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}
