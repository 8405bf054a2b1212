/**
 * The sync op queue: one operation per link ("bring this link to its desired state"), coalescing
 * later triggers, bounded by `queue_capacity`; ready operations by destination, retries waiting for
 * their `not_before`; and the durable queue entries of operations that wait (see
 * SyncTuning.persistAfterMs). It decides nothing about running them: the worker takes ready
 * operations from it as its limits allow.
 */
import type { Clock, Logger } from '../framework/context.js';
import { KeyholdError } from '../framework/errors.js';
import type { QueueEntry, SyncStore } from './store.js';
import { parseLinkKey } from './types.js';

/** Thrown when the queue holds `queue_capacity` operations. */
export class QueueFullError extends KeyholdError {
  constructor(capacity: number) {
    super(
      'unavailable',
      `sync queue is full (queue_capacity ${capacity}); retry later or raise queue_capacity in sys/sync/config`,
    );
  }
}

/** One queued (or running) operation on a link. */
export interface Op {
  seq: string;
  link: string;
  /** `type/name` of the link's destination. */
  dest: string;
  attempts: number;
  notBefore: number;
  /** Clock time it was queued (for `persistAfterMs`). */
  queuedAt: number;
  /** Whether its queue entry exists in storage (or is being written). */
  stored: boolean;
  /** Writes and deletes of its queue entry, chained so they land in order. */
  io: Promise<void>;
}

/** What the queue needs around it. */
export interface OpQueueDeps {
  store: SyncStore;
  clock: Clock;
  logger: Logger;
  /** How long an operation waits before it gets a queue entry in storage. */
  persistAfterMs: () => number;
  /** Called when delayed operations became ready (or a wake-up time set by `wakeAt` came). */
  onWake: () => void;
}

/** Queued operations: by sequence, by link, ready by destination, and delayed. */
export class OpQueue {
  private readonly ops = new Map<string, Op>();
  private readonly pendingByLink = new Map<string, Op>();
  private readonly readyByDest = new Map<string, Set<Op>>();
  private readonly delayed = new Set<Op>();
  private delayTimer: NodeJS.Timeout | null = null;
  private delayAt = Infinity;
  private persistTimer: NodeJS.Timeout | null = null;
  private seqCounter = 0;
  private closed = false;
  /** sys/sync/config `queue_capacity`. */
  capacity = 1_000_000;

  constructor(private readonly deps: OpQueueDeps) {}

  /** Queued operations (including delayed retries and running ones that will run again). */
  get size(): number {
    return this.ops.size;
  }

  /** Whether an operation on `link` is queued (not running). */
  has(link: string): boolean {
    return this.pendingByLink.has(link);
  }

  /** Whether `link` can be queued without exceeding the capacity. */
  hasRoom(link: string): boolean {
    return this.pendingByLink.has(link) || this.ops.size < this.capacity;
  }

  /** Load the durable queue entries (at start): duplicates of a link left by a crash are deleted. */
  async load(): Promise<void> {
    const { store } = this.deps;
    for (const seq of await store.opSeqs()) {
      const e = await store.getOp(seq);
      if (!e || this.ops.has(seq)) continue;
      if (this.pendingByLink.has(e.link)) {
        await store.deleteOp(seq); // a duplicate left by a crash between writes
        continue;
      }
      this.add({
        seq,
        link: e.link,
        dest: destOf(e.link),
        attempts: e.attempts,
        notBefore: e.not_before,
        queuedAt: this.deps.clock.now(),
        stored: true,
        io: Promise.resolve(),
      });
    }
  }

  /**
   * Queue an operation on `link`, coalesced with a queued one (`now` cancels its backoff wait);
   * `ready` is called when an operation became ready. Throws QueueFullError at capacity.
   */
  async enqueue(link: string, opts: { now?: boolean }, ready: () => void): Promise<void> {
    const existing = this.pendingByLink.get(link);
    if (existing) {
      if (opts.now && existing.notBefore > this.deps.clock.now()) {
        existing.notBefore = 0;
        existing.attempts = 0;
        this.delayed.delete(existing);
        this.readySet(existing.dest).add(existing);
        ready();
        if (existing.stored) await this.persist(existing);
      }
      return;
    }
    if (this.ops.size >= this.capacity) throw new QueueFullError(this.capacity);
    const now = this.deps.clock.now();
    const seq = `${String(now).padStart(15, '0')}-${String(this.seqCounter++).padStart(9, '0')}`;
    // No queue entry yet (see SyncTuning.persistAfterMs): the caller has stored why the link is due.
    this.add({
      seq,
      link,
      dest: destOf(link),
      attempts: 0,
      notBefore: 0,
      queuedAt: now,
      stored: false,
      io: Promise.resolve(),
    });
    ready();
    this.armPersist();
  }

  /** Destinations with ready operations, in the order they became ready. */
  readyDests(): string[] {
    return [...this.readyByDest.keys()];
  }

  /** Whether `dest` has ready operations (forgetting it when not). */
  hasReady(dest: string): boolean {
    const set = this.readyByDest.get(dest);
    if (set && set.size > 0) return true;
    this.readyByDest.delete(dest);
    return false;
  }

  /** Take the first ready operation of `dest` that `can` accepts (its link is not running), if any. */
  takeReady(dest: string, can: (op: Op) => boolean): Op | undefined {
    const set = this.readyByDest.get(dest);
    if (!set) return undefined;
    for (const op of set) {
      if (!can(op)) continue;
      set.delete(op);
      if (set.size === 0) this.readyByDest.delete(dest);
      return op;
    }
    return undefined;
  }

  /** `op` starts: a new trigger of its link queues a new operation from now on. */
  started(op: Op): void {
    this.pendingByLink.delete(op.link);
  }

  /** Queue `op` again to run at `op.notBefore` (a retry), its entry stored at once. */
  async retry(op: Op): Promise<void> {
    this.ops.set(op.seq, op);
    this.pendingByLink.set(op.link, op);
    this.delayed.add(op);
    await this.persist(op);
    this.armDelay(op.notBefore);
  }

  /** `op` is done: it leaves the queue, and its entry storage. */
  async finish(op: Op): Promise<void> {
    this.ops.delete(op.seq);
    await this.unpersist(op);
  }

  /** Call `onWake` at `at` (a destination's hold ends). */
  wakeAt(at: number): void {
    this.armDelay(at);
  }

  /** Stop the timers (shutting down); queued operations stay. */
  stop(): void {
    this.closed = true;
    if (this.delayTimer) clearTimeout(this.delayTimer);
    if (this.persistTimer) clearTimeout(this.persistTimer);
  }

  /** Store every queued operation that has no entry yet, and wait for all queue writes. */
  async persistAll(): Promise<void> {
    for (const op of this.ops.values()) if (!op.stored) void this.persist(op);
    await Promise.allSettled([...this.ops.values()].map((op) => op.io));
  }

  private add(op: Op): void {
    this.ops.set(op.seq, op);
    this.pendingByLink.set(op.link, op);
    if (op.notBefore > this.deps.clock.now()) {
      this.delayed.add(op);
      this.armDelay(op.notBefore);
    } else this.readySet(op.dest).add(op);
  }

  private readySet(dest: string): Set<Op> {
    let s = this.readyByDest.get(dest);
    if (!s) this.readyByDest.set(dest, (s = new Set()));
    return s;
  }

  /** Write (or rewrite) the queue entry of `op`, after its earlier writes. */
  private persist(op: Op): Promise<void> {
    op.stored = true;
    const e: QueueEntry = {
      link: op.link,
      attempts: op.attempts,
      not_before: op.notBefore,
      enqueued_at: this.deps.clock.now(),
    };
    const p = op.io.then(() => this.deps.store.putOp(op.seq, e));
    op.io = p.catch(() => {});
    return p;
  }

  /** Delete the queue entry of a finished `op`, if it has one. */
  private unpersist(op: Op): Promise<void> {
    if (!op.stored) return op.io;
    op.stored = false;
    const p = op.io.then(() => this.deps.store.deleteOp(op.seq));
    op.io = p.catch(() => {});
    return p;
  }

  private armPersist(): void {
    if (this.persistTimer || this.closed) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = null;
      void this.persistWaiting();
    }, this.deps.persistAfterMs());
    this.persistTimer.unref?.();
  }

  /** Store the queue entries of operations that have waited `persistAfterMs` (sync disabled, a backlog). */
  private async persistWaiting(): Promise<void> {
    const now = this.deps.clock.now();
    const writes: Promise<void>[] = [];
    let younger = false;
    for (const op of this.ops.values()) {
      if (op.stored || this.pendingByLink.get(op.link) !== op) continue;
      if (now - op.queuedAt >= this.deps.persistAfterMs()) writes.push(this.persist(op));
      else younger = true;
    }
    if (younger) this.armPersist();
    for (const r of await Promise.allSettled(writes)) {
      if (r.status === 'rejected')
        this.deps.logger.warn('sync: storing a queue entry failed; the link record still marks it due', {
          error: (r.reason as Error)?.name,
        });
    }
  }

  private armDelay(at: number): void {
    if (this.closed || at >= this.delayAt) return;
    if (this.delayTimer) clearTimeout(this.delayTimer);
    this.delayAt = at;
    this.delayTimer = setTimeout(() => this.wakeDelayed(), Math.max(0, at - this.deps.clock.now()));
    this.delayTimer.unref?.();
  }

  private wakeDelayed(): void {
    this.delayTimer = null;
    this.delayAt = Infinity;
    const now = this.deps.clock.now();
    let next = Infinity;
    for (const op of this.delayed) {
      if (op.notBefore <= now) {
        this.delayed.delete(op);
        this.readySet(op.dest).add(op);
      } else next = Math.min(next, op.notBefore);
    }
    if (next !== Infinity) this.armDelay(next);
    this.deps.onWake();
  }
}

/** `type/name` of a link key. */
function destOf(link: string): string {
  const p = parseLinkKey(link);
  return `${p.type}/${p.name}`;
}
