/**
 * The sync worker: a durable queue of "bring this link to its desired state" operations, a pool
 * with a global and a per-destination concurrency limit, per-operation timeouts, exponential backoff
 * with jitter on retryable failures, and periodic reconciliation. Operations are idempotent (put the
 * current value / delete the name), so one interrupted by a crash simply runs again after restart.
 */
import type { Clock, Logger, MountInfo } from '../framework/context.js';
import { isKeyholdError, KeyholdError } from '../framework/errors.js';
import { backoffDelay, type BackoffPolicy } from './backoff.js';
import type { Connector, ConnectorDeps } from './destinations/common.js';
import { DESTINATION_TYPES } from './destinations/index.js';
import { SyncFailure, failureFromError } from './failure.js';
import { HttpClient } from './http-client.js';
import { KeyedLock } from '../framework/keyed-lock.js';
import { nameProblem, normalizeName, valueProblem } from './name-rules.js';
import { NetworkGuard } from './network-guard.js';
import type { SyncStore, QueueEntry } from './store.js';
import { NameTemplate, type TemplateVars } from './templates.js';
import { ERROR_STATUSES, linkKey, parseLinkKey, type ActivityStatus, type DestinationRecord, type EntryState, type LinkRecord, type SyncStatus } from './types.js';
import { entriesOf } from './values.js';

/** What sync needs from KV v2 (resolved lazily: user mounts load after the sync module). */
export interface KvSource {
  /** A KV v2 mount by path or accessor. */
  mount(pathOrAccessor: string): MountInfo | undefined;
  /** Latest live version, or null when missing, deleted or destroyed. */
  readLatest(mount: MountInfo, path: string): Promise<{ data: Record<string, unknown>; version: number } | null>;
  /** Whether the secret has metadata (any version, even deleted). */
  exists(mount: MountInfo, path: string): Promise<boolean>;
}

/** Tuning of the worker (daemon environment variables; see docs/sync.md). */
export interface SyncTuning {
  /** Operations processed at once (over all destinations). */
  concurrency: number;
  /**
   * Provider calls (connector put/remove) in flight per destination. Operations of a destination
   * are admitted up to twice this number, so the local work of one (reading the secret, storing
   * the status) overlaps the provider calls of the others instead of idling a provider slot.
   */
  perDestination: number;
  /** Per HTTP request. */
  timeoutMs: number;
  /** Whole operation on one link. */
  opTimeoutMs: number;
  backoff: BackoffPolicy;
  reconcileMs: number;
  /** How long set/remove wait for the first attempt before answering. */
  setWaitMs: number;
  /**
   * An operation still waiting (not started) this long gets a queue entry in storage. Before that,
   * and while it runs, its link record is what survives a crash: every trigger first stores why the
   * link is due (PENDING after a refresh or KV change, removing, its destination purging, a failure,
   * a version mismatch; a new link is not stored before its set answers), and the start-up
   * reconciliation re-queues exactly those. Most operations start at once and finish within a
   * request's time, so they cost no queue write and delete. Retries in backoff are stored at once
   * (attempts, not_before), and close() stores whatever is still queued.
   */
  persistAfterMs: number;
}

/** Defaults of the tuning. */
export const DEFAULT_TUNING: SyncTuning = {
  concurrency: 8,
  perDestination: 4,
  timeoutMs: 30_000,
  opTimeoutMs: 120_000,
  backoff: { baseMs: 1_000, maxMs: 300_000, maxAttempts: 10 },
  reconcileMs: 300_000,
  setWaitMs: 5_000,
  persistAfterMs: 1_000,
};

/** Read tuning from KEYHOLD_SYNC_* environment variables (bad values fall back to defaults). */
export function tuningFromEnv(env: NodeJS.ProcessEnv): SyncTuning {
  const num = (name: string, dflt: number, min: number) => {
    const v = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(v) && v >= min ? v : dflt;
  };
  const d = DEFAULT_TUNING;
  return {
    concurrency: num('KEYHOLD_SYNC_CONCURRENCY', d.concurrency, 1),
    perDestination: num('KEYHOLD_SYNC_DEST_CONCURRENCY', d.perDestination, 1),
    timeoutMs: num('KEYHOLD_SYNC_TIMEOUT_MS', d.timeoutMs, 50),
    opTimeoutMs: num('KEYHOLD_SYNC_OP_TIMEOUT_MS', d.opTimeoutMs, 100),
    backoff: {
      baseMs: num('KEYHOLD_SYNC_RETRY_BASE_MS', d.backoff.baseMs, 1),
      maxMs: num('KEYHOLD_SYNC_RETRY_MAX_MS', d.backoff.maxMs, 1),
      maxAttempts: num('KEYHOLD_SYNC_MAX_ATTEMPTS', d.backoff.maxAttempts, 1),
    },
    reconcileMs: num('KEYHOLD_SYNC_RECONCILE_MS', d.reconcileMs, 100),
    setWaitMs: num('KEYHOLD_SYNC_SET_WAIT_MS', d.setWaitMs, 0),
    persistAfterMs: d.persistAfterMs,
  };
}

/** Thrown when the queue holds `queue_capacity` operations. */
export class QueueFullError extends KeyholdError {
  constructor(capacity: number) {
    super('unavailable', `sync queue is full (queue_capacity ${capacity}); retry later or raise queue_capacity in sys/sync/config`);
  }
}

interface Op {
  seq: string;
  link: string;
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

type ConnectFn = (dest: DestinationRecord, deps: ConnectorDeps) => Connector;

/** Operations admitted per destination, per provider slot (see SyncTuning.perDestination). */
const PIPELINE_DEPTH = 2;

/** Provider slots of one destination: calls in flight and the calls waiting for one, in order. */
interface Gate {
  active: number;
  waiting: Array<() => void>;
}

/** Failures worth a look at without waiting for a new trigger. */
const RECONCILE_RETRY: ReadonlySet<SyncStatus> = new Set(['PENDING', 'UNKNOWN', 'INTERNAL_VAULT_ERROR', 'EXTERNAL_SERVICE_ERROR']);

/** Severity order for summarizing several entries into one status. */
const SEVERITY: SyncStatus[] = ['SYNCED', 'UNSYNCED', 'PENDING', 'SYNCING', 'UNSYNCING', 'UNKNOWN', 'EXTERNAL_SERVICE_ERROR', 'CLIENT_SIDE_ERROR', 'INTERNAL_VAULT_ERROR'];

/** The worst of several statuses (errors first, then PENDING). */
export function worstStatus(list: SyncStatus[], fallback: SyncStatus): SyncStatus {
  let best = -1;
  for (const s of list) best = Math.max(best, SEVERITY.indexOf(s));
  return best === -1 ? fallback : SEVERITY[best]!;
}

/** The queue, the pool and the per-link processing. */
export class Syncer {
  private readonly ops = new Map<string, Op>();
  private readonly pendingByLink = new Map<string, Op>();
  private readonly readyByDest = new Map<string, Set<Op>>();
  private readonly delayed = new Set<Op>();
  private readonly running = new Map<string, AbortController>();
  /** Operations holding an admission slot, and per destination (see startOp). */
  private admitted = 0;
  private readonly runningPerDest = new Map<string, number>();
  private readonly gates = new Map<string, Gate>();
  /**
   * Destinations the provider throttled, and until when: none of their operations starts before
   * (issue 19: one 403/429 rate limit slows every association of the destination down, not only
   * the one that hit it, so a large sync does not keep hammering a provider that asked us to wait).
   */
  private readonly heldUntil = new Map<string, number>();
  /** Latest versions read by set for the next attempt on a link (see offerSecret). */
  private readonly offered = new Map<string, { secret: { data: Record<string, unknown>; version: number }; kvChange: number; at: number }>();
  private kvChange = 0;
  private readonly inflight = new Set<Promise<void>>();
  private readonly waiters = new Map<string, Array<{ fire: (l: LinkRecord | null) => void; after: number }>>();
  /** Attempts started so far: a waiter is answered only by an attempt that started after it. */
  private attemptNo = 0;
  private readonly connectors = new Map<string, { revision: number; connector: Connector }>();
  /** accessor + "\0" + secret name -> link keys. */
  private readonly bySecret = new Map<string, Set<string>>();
  readonly locks = new KeyedLock();
  private delayTimer: NodeJS.Timeout | null = null;
  private persistTimer: NodeJS.Timeout | null = null;
  private delayAt = Infinity;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private seqCounter = 0;
  private rr = 0;
  private paused = false;
  private started = false;
  private closed = false;
  private capacity = 1_000_000;
  private readonly connect: ConnectFn;
  private readonly random: () => number;

  constructor(
    private readonly deps: {
      store: SyncStore;
      kv: KvSource;
      clock: Clock;
      logger: Logger;
      tuning: SyncTuning;
      connect?: ConnectFn;
      random?: () => number;
    },
  ) {
    this.connect = deps.connect ?? ((dest, d) => DESTINATION_TYPES[dest.type].connect(dest, d));
    this.random = deps.random ?? Math.random;
  }

  get tuning(): SyncTuning {
    return this.deps.tuning;
  }

  /** Links the worker is pushing or deleting at the provider right now (never stored). */
  private readonly activity = new Map<string, ActivityStatus>();
  /** Told when a link's in-flight status starts or ends (the service refreshes its association maps). */
  onActivity: ((link: string) => void) | null = null;

  /** `SYNCING` / `UNSYNCING` while an attempt on `link` talks to the provider, else undefined. */
  activityOf(link: string): ActivityStatus | undefined {
    return this.activity.get(link);
  }

  private setActivity(link: string, a: ActivityStatus | null): void {
    if ((this.activity.get(link) ?? null) === a) return;
    if (a) this.activity.set(link, a);
    else this.activity.delete(link);
    this.onActivity?.(link);
  }

  /** Load the index and the durable queue; start dispatching and reconciling. */
  async start(): Promise<void> {
    const { store } = this.deps;
    const cfg = await store.config();
    this.paused = cfg.disabled;
    this.capacity = cfg.queue_capacity;
    await this.loadIndex();
    for (const seq of await store.opSeqs()) {
      const e = await store.getOp(seq);
      if (!e || this.ops.has(seq)) continue;
      if (this.pendingByLink.has(e.link)) {
        await store.deleteOp(seq); // a duplicate left by a crash between writes
        continue;
      }
      this.addOp({ seq, link: e.link, dest: destOf(e.link), attempts: e.attempts, notBefore: e.not_before, queuedAt: this.deps.clock.now(), stored: true, io: Promise.resolve() });
    }
    this.started = true;
    this.scheduleReconcile(0);
    this.pump();
  }

  private async loadIndex(): Promise<void> {
    const { store } = this.deps;
    for (const type of Object.keys(DESTINATION_TYPES)) {
      for (const name of await store.destNames(type as never)) {
        for (const id of await store.linkIds(type, name)) this.indexAdd(linkKey(type, name, id));
      }
    }
  }

  /** Register a link in the secret index. */
  indexAdd(key: string): void {
    const s = secretOfId(parseLinkKey(key).id);
    const k = `${s.accessor}\0${s.secret}`;
    let set = this.bySecret.get(k);
    if (!set) this.bySecret.set(k, (set = new Set()));
    set.add(key);
  }

  /** Drop a link from the secret index. */
  indexRemove(key: string): void {
    const s = secretOfId(parseLinkKey(key).id);
    const k = `${s.accessor}\0${s.secret}`;
    const set = this.bySecret.get(k);
    set?.delete(key);
    if (set && set.size === 0) this.bySecret.delete(k);
  }

  /** Link keys of a secret. */
  linksOf(accessor: string, secret: string): string[] {
    return [...(this.bySecret.get(`${accessor}\0${secret}`) ?? [])];
  }

  /** Every secret with at least one link: [accessor, secret, link keys]. */
  *secrets(): Iterable<[string, string, string[]]> {
    for (const [k, set] of this.bySecret) {
      const i = k.indexOf('\0');
      yield [k.slice(0, i), k.slice(i + 1), [...set]];
    }
  }

  /** Apply sys/sync/config. */
  configure(cfg: { disabled: boolean; queue_capacity: number }): void {
    this.paused = cfg.disabled;
    this.capacity = cfg.queue_capacity;
    this.pump();
  }

  get disabled(): boolean {
    return this.paused;
  }

  /** Queued operations (including delayed retries). */
  get queued(): number {
    return this.ops.size;
  }

  /** Whether `link` can be queued without exceeding the capacity. */
  hasRoom(link: string): boolean {
    return this.pendingByLink.has(link) || this.ops.size < this.capacity;
  }

  /** Whether an operation on `link` is queued or running. */
  busy(link: string): boolean {
    return this.pendingByLink.has(link) || this.running.has(link);
  }

  /** Queue an operation on `link` (coalesced with a queued one; `now` cancels a backoff wait). */
  async enqueue(link: string, opts: { now?: boolean } = {}): Promise<void> {
    const existing = this.pendingByLink.get(link);
    if (existing) {
      if (opts.now && existing.notBefore > this.deps.clock.now()) {
        existing.notBefore = 0;
        existing.attempts = 0;
        this.delayed.delete(existing);
        this.readySet(existing.dest).add(existing);
        this.pump();
        if (existing.stored) await this.persist(existing);
      }
      return;
    }
    if (this.ops.size >= this.capacity) throw new QueueFullError(this.capacity);
    const now = this.deps.clock.now();
    const seq = `${String(now).padStart(15, '0')}-${String(this.seqCounter++).padStart(9, '0')}`;
    // No queue entry yet (see SyncTuning.persistAfterMs): the caller has stored why the link is due.
    this.addOp({ seq, link, dest: destOf(link), attempts: 0, notBefore: 0, queuedAt: now, stored: false, io: Promise.resolve() });
    this.pump();
    this.armPersist();
  }

  /** A KV secret changed somewhere (called synchronously from the KV event): offered reads are stale. */
  noteKvChange(): void {
    this.kvChange++;
    this.offered.clear();
  }

  /** A marker to take before reading a secret that will be offered to `offerSecret`. */
  get kvChanges(): number {
    return this.kvChange;
  }

  /**
   * Offer the latest version of a link's secret, read after `kvChanges` returned `marker`, to the
   * link's next attempt, which then need not read it again (set reads it anyway to check that the
   * secret exists). Ignored when any KV change has happened since the marker; an offer is used
   * once, and only within a second.
   */
  offerSecret(link: string, secret: { data: Record<string, unknown>; version: number }, marker: number): void {
    if (marker !== this.kvChange || this.closed) return;
    this.offered.set(link, { secret, kvChange: marker, at: this.deps.clock.now() });
  }

  /** The number of attempts started so far (take it before queueing the change to wait for). */
  attemptMark(): number {
    return this.attemptNo;
  }

  /**
   * Resolve with the link after an attempt that started after `mark` completes (null when
   * dropped), or undefined after `ms`. An attempt already running when the caller queued its change
   * may not include it.
   */
  waitForAttempt(link: string, ms: number, mark = this.attemptNo): Promise<LinkRecord | null | undefined> {
    if (ms <= 0 || this.paused) return Promise.resolve(undefined);
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

  /** Write (or rewrite) the queue entry of `op`, after its earlier writes. */
  private persist(op: Op): Promise<void> {
    op.stored = true;
    const e: QueueEntry = { link: op.link, attempts: op.attempts, not_before: op.notBefore, enqueued_at: this.deps.clock.now() };
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
    }, this.deps.tuning.persistAfterMs);
    this.persistTimer.unref?.();
  }

  /** Store the queue entries of operations that have waited `persistAfterMs` (sync disabled, a backlog). */
  private async persistWaiting(): Promise<void> {
    const now = this.deps.clock.now();
    const writes: Promise<void>[] = [];
    let younger = false;
    for (const op of this.ops.values()) {
      if (op.stored || this.pendingByLink.get(op.link) !== op) continue;
      if (now - op.queuedAt >= this.deps.tuning.persistAfterMs) writes.push(this.persist(op));
      else younger = true;
    }
    if (younger) this.armPersist();
    for (const r of await Promise.allSettled(writes)) {
      if (r.status === 'rejected') this.deps.logger.warn('sync: storing a queue entry failed; the link record still marks it due', { error: (r.reason as Error)?.name });
    }
  }

  private readySet(dest: string): Set<Op> {
    let s = this.readyByDest.get(dest);
    if (!s) this.readyByDest.set(dest, (s = new Set()));
    return s;
  }

  private addOp(op: Op): void {
    this.ops.set(op.seq, op);
    this.pendingByLink.set(op.link, op);
    if (op.notBefore > this.deps.clock.now()) {
      this.delayed.add(op);
      this.armDelay(op.notBefore);
    } else this.readySet(op.dest).add(op);
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
    this.pump();
  }

  /** Start as many ready operations as the limits allow. */
  private pump(): void {
    if (!this.started || this.closed || this.paused) return;
    const { concurrency, perDestination } = this.deps.tuning;
    const dests = [...this.readyByDest.keys()];
    if (dests.length === 0) return;
    let progressed = true;
    // Operations storing their outcome hold no slot, but at most as many again may be in flight.
    const room = () => this.admitted < concurrency && this.running.size < concurrency * 2;
    while (room() && progressed) {
      progressed = false;
      for (let i = 0; i < dests.length && room(); i++) {
        const dest = dests[(this.rr + i) % dests.length]!;
        const set = this.readyByDest.get(dest);
        if (!set || set.size === 0) {
          this.readyByDest.delete(dest);
          continue;
        }
        if ((this.runningPerDest.get(dest) ?? 0) >= perDestination * PIPELINE_DEPTH) continue;
        const hold = this.heldUntil.get(dest);
        if (hold !== undefined) {
          if (hold > this.deps.clock.now()) continue;
          this.heldUntil.delete(dest);
        }
        let pick: Op | undefined;
        for (const op of set) {
          if (!this.running.has(op.link)) {
            pick = op;
            break;
          }
        }
        if (!pick) continue;
        set.delete(pick);
        if (set.size === 0) this.readyByDest.delete(dest);
        this.startOp(pick);
        progressed = true;
      }
      this.rr++;
    }
  }

  /**
   * Run `op`. It holds an admission slot (global `concurrency`, and its destination's) while it
   * reads and calls the provider; storing the outcome happens after the slot is given back, so the
   * next operation starts meanwhile (the link stays `running`: it cannot start again before).
   */
  private startOp(op: Op): void {
    this.pendingByLink.delete(op.link);
    const ctrl = new AbortController();
    this.running.set(op.link, ctrl);
    this.admitted++;
    this.runningPerDest.set(op.dest, (this.runningPerDest.get(op.dest) ?? 0) + 1);
    let admitted = true;
    const release = () => {
      if (!admitted) return;
      admitted = false;
      this.admitted--;
      const n = (this.runningPerDest.get(op.dest) ?? 1) - 1;
      if (n <= 0) this.runningPerDest.delete(op.dest);
      else this.runningPerDest.set(op.dest, n);
      this.pump();
    };
    const timer = setTimeout(() => ctrl.abort(Object.assign(new Error('operation timed out'), { name: 'TimeoutError' })), this.deps.tuning.opTimeoutMs);
    timer.unref?.();
    const p = this.runOp(op, ctrl.signal, release, ++this.attemptNo)
      .catch((e) => this.deps.logger.error('sync operation failed unexpectedly', { link: safeLinkLabel(op.link), error: (e as Error)?.name }))
      .finally(() => {
        clearTimeout(timer);
        this.setActivity(op.link, null);
        this.running.delete(op.link);
        this.inflight.delete(p);
        if (admitted) release();
        else this.pump(); // the link may have been queued again meanwhile
      });
    this.inflight.add(p);
  }

  private async runOp(op: Op, signal: AbortSignal, release: () => void, startNo: number): Promise<void> {
    let result: { failure?: SyncFailure; link: LinkRecord | null };
    try {
      result = await this.process(op.link, signal, release);
    } catch (e) {
      result = { failure: failureFromError(e, 'sync'), link: null };
    }
    if (this.closed && signal.aborted) return; // shutting down: the durable entry runs again after restart
    const f = result.failure;
    const superseded = this.pendingByLink.has(op.link);
    if (f?.retryable && !superseded) {
      // Self-healing (issue 19): a failure that can pass is retried until it succeeds. The first
      // `maxAttempts` retries back off exponentially; later ones wait the maximum delay each time
      // (the reconciliation pace), never giving up while the link is due.
      op.attempts++;
      const now = this.deps.clock.now();
      const policy = this.deps.tuning.backoff;
      const delay = op.attempts < policy.maxAttempts ? backoffDelay(policy, op.attempts, this.random, f.opts.retryAfterMs) : Math.max(policy.maxMs, Math.min(f.opts.retryAfterMs ?? 0, policy.maxMs));
      op.notBefore = now + delay;
      if (f.opts.rateLimited) this.holdDestination(op.dest, now + Math.min(policy.maxMs, f.opts.retryAfterMs ?? delay));
      this.ops.set(op.seq, op);
      this.pendingByLink.set(op.link, op);
      this.delayed.add(op);
      await this.persist(op);
      this.armDelay(op.notBefore);
    } else {
      this.ops.delete(op.seq);
      await this.unpersist(op);
    }
    const ws = this.waiters.get(op.link);
    if (ws) {
      const later = ws.filter((w) => w.after >= startNo);
      if (later.length) this.waiters.set(op.link, later);
      else this.waiters.delete(op.link);
      for (const w of ws) if (w.after < startNo) w.fire(result.link);
    }
  }

  /** Start nothing of `dest` before `until` (a rate limit); the delay timer wakes the pump then. */
  private holdDestination(dest: string, until: number): void {
    if ((this.heldUntil.get(dest) ?? 0) >= until) return;
    this.heldUntil.set(dest, until);
    this.armDelay(until);
    this.deps.logger.warn('sync: destination rate limited; its operations wait', { destination: dest, wait_ms: Math.max(0, until - this.deps.clock.now()) });
  }

  /** Until when a destination is held after a rate limit (0: not held). */
  heldUntilOf(dest: string): number {
    const t = this.heldUntil.get(dest) ?? 0;
    return t > this.deps.clock.now() ? t : 0;
  }

  /** Run one provider call of `dest` in one of its `perDestination` slots (first come, first served). */
  private async inSlot<T>(dest: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    let g = this.gates.get(dest);
    if (!g) this.gates.set(dest, (g = { active: 0, waiting: [] }));
    if (g.active < this.deps.tuning.perDestination) g.active++;
    else {
      signal.throwIfAborted();
      // A released slot is handed over directly (`active` unchanged), so no newcomer can overtake.
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const i = g.waiting.indexOf(go);
          if (i !== -1) g.waiting.splice(i, 1);
          reject(signal.reason);
        };
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        g.waiting.push(go);
      });
    }
    try {
      const held = this.heldUntilOf(dest);
      if (held) {
        // Admitted before the rate limit was seen: do not send; wait with the others.
        throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'destination rate limited by the provider; waiting before sending', { retryable: true, rateLimited: true, retryAfterMs: held - this.deps.clock.now() });
      }
      return await call();
    } finally {
      const next = g.waiting.shift();
      if (next) next();
      else if (--g.active === 0) this.gates.delete(dest);
    }
  }

  /** `c` with every provider call taking a slot of `dest`. */
  private gated(c: Connector, dest: string, signal: AbortSignal, active: () => void): Connector {
    return {
      put: (name, value, sig, opts) => this.inSlot(dest, signal, () => (active(), c.put(name, value, sig, opts))),
      remove: (name, sig) => this.inSlot(dest, signal, () => (active(), c.remove(name, sig))),
      close: () => c.close(),
    };
  }

  /** The connector of a destination (rebuilt when the destination changes). */
  private connectorOf(dest: DestinationRecord): Connector {
    const key = `${dest.type}/${dest.name}`;
    const cached = this.connectors.get(key);
    if (cached && cached.revision === dest.revision) return cached.connector;
    cached?.connector.close();
    const guard = new NetworkGuard(dest.options);
    const connector = this.connect(dest, {
      guard,
      http: new HttpClient(guard, this.deps.tuning.timeoutMs),
      timeoutMs: this.deps.tuning.timeoutMs,
      now: () => this.deps.clock.now(),
      logger: this.deps.logger,
      githubApp: (name) => this.deps.store.getApp(name),
    });
    this.connectors.set(key, { revision: dest.revision, connector });
    return connector;
  }

  /** Forget a destination's connector (after delete). */
  dropConnector(type: string, name: string): void {
    const key = `${type}/${name}`;
    this.connectors.get(key)?.connector.close();
    this.connectors.delete(key);
  }

  /** Bring one link to its desired state; returns the failure that should be retried, if any. */
  private async process(key: string, signal: AbortSignal, release: () => void = () => {}): Promise<{ failure?: SyncFailure; link: LinkRecord | null }> {
    const { store, kv, clock } = this.deps;
    const { type, name, id } = parseLinkKey(key);
    const link = await store.getLink(type, name, id);
    if (!link) return { link: null };
    const dest = await store.getDest(type, name);
    if (!dest) {
      // The destination was force-deleted: the link goes with it.
      await this.locks.run(key, async () => {
        await store.deleteLink(type, name, id);
        this.indexRemove(key);
      });
      return { link: null };
    }
    const generation = link.generation;
    const now = () => new Date(clock.now()).toISOString();
    const results = new Map<string, EntryState | null>();
    let linkStatus: { status: SyncStatus; error?: string } | null = null;
    let retry: SyncFailure | undefined;
    let syncedVersion: number | undefined;
    let removeLink = false;

    const fail = (f: SyncFailure) => {
      if (f.retryable && !retry) retry = f;
    };
    let connector: Connector | null = null;
    // Shown from the moment a provider call of this attempt holds a slot (SYNCING / UNSYNCING).
    let activity: ActivityStatus = 'SYNCING';
    try {
      connector = this.gated(this.connectorOf(dest), `${type}/${name}`, signal, () => this.setActivity(key, activity));
    } catch (e) {
      const f = isKeyholdError(e) && e.kind === 'invalid' ? new SyncFailure('CLIENT_SIDE_ERROR', `destination configuration: ${e.message}`) : failureFromError(e, 'connector');
      linkStatus = { status: f.status, error: f.message };
    }

    const unsyncAll = async (c: Connector) => {
      for (const [sub, st] of Object.entries(link.entries)) {
        if (retry) break;
        if (!st.present || !st.external_name) {
          results.set(sub, { ...st, sync_status: 'UNSYNCED', error: undefined, updated_at: now(), present: false });
          continue;
        }
        try {
          await c.remove(st.external_name, signal);
          results.set(sub, { sync_status: 'UNSYNCED', updated_at: now(), external_name: st.external_name, present: false });
        } catch (e) {
          const f = failureFromError(e, 'unsync');
          fail(f);
          results.set(sub, { ...st, sync_status: f.status, error: f.message, updated_at: now() });
        }
      }
    };

    if (connector && (link.removing || dest.purge_initiated_at)) {
      activity = 'UNSYNCING';
      await unsyncAll(connector);
      const allGone = Object.keys(link.entries).every((sub) => results.get(sub)?.present === false);
      if (allGone) removeLink = true;
      else if (!retry) linkStatus = { status: worstStatus([...results.values()].map((r) => r!.sync_status), 'UNKNOWN'), error: [...results.values()].find((r) => r?.error)?.error };
    } else if (connector) {
      const mount = kv.mount(link.accessor);
      let secret: { data: Record<string, unknown>; version: number } | null = null;
      let readFailed = false;
      if (!mount) {
        linkStatus = { status: 'INTERNAL_VAULT_ERROR', error: `mount with accessor ${link.accessor} no longer exists` };
        readFailed = true;
      } else {
        try {
          const offer = this.offered.get(key);
          if (offer) this.offered.delete(key);
          secret = offer && offer.kvChange === this.kvChange && clock.now() - offer.at < 1_000 ? offer.secret : await kv.readLatest(mount, link.secret_name);
        } catch (e) {
          const f = new SyncFailure('INTERNAL_VAULT_ERROR', `reading the secret failed: ${isKeyholdError(e) ? e.message : ((e as Error)?.name ?? 'error')}`, { retryable: true });
          fail(f);
          linkStatus = { status: f.status, error: f.message };
          readFailed = true;
        }
      }
      if (!readFailed && secret === null) {
        activity = 'UNSYNCING';
        await unsyncAll(connector);
        if (!retry) {
          linkStatus = { status: 'UNSYNCED' };
          syncedVersion = 0;
        }
      } else if (secret) {
        activity = 'SYNCING';
        const desired = entriesOf(secret.data, link.granularity);
        const template = parsedTemplate(link.template);
        const vars: TemplateVars = {
          DestinationType: dest.type,
          DestinationName: dest.name,
          NamespacePath: '',
          NamespaceBaseName: '',
          NamespaceID: 'root',
          MountPath: mount!.path.replace(/\/$/, ''),
          MountBaseName: mount!.path.replace(/\/$/, '').split('/').pop() ?? '',
          MountAccessor: mount!.accessor,
          SecretPath: link.secret_name,
          SecretBaseName: link.secret_name.split('/').pop() ?? '',
        };
        for (const [sub, value] of desired) {
          const old = link.entries[sub];
          if (retry) {
            results.set(sub, old ?? { sync_status: 'PENDING', updated_at: now(), present: false });
            continue;
          }
          const extName = normalizeName(dest.type, template.render({ ...vars, SecretKey: sub }));
          const problem = nameProblem(dest.type, extName) ?? valueProblem(dest.type, value);
          if (problem) {
            results.set(sub, { ...(old ?? { present: false }), sync_status: 'CLIENT_SIDE_ERROR', error: problem, updated_at: now() });
            continue;
          }
          try {
            // No record of having written this name: the connector may try "create" first.
            await connector.put(extName, value, signal, { fresh: !(old?.present && old.external_name === extName) });
            let state: EntryState = { sync_status: 'SYNCED', updated_at: now(), external_name: extName, present: true };
            if (old?.present && old.external_name && old.external_name !== extName) {
              // Template or granularity changed on refresh: the old name goes (reference 1.5.1).
              try {
                await connector.remove(old.external_name, signal);
              } catch (e) {
                const f = failureFromError(e, 'removing the previous name');
                state = { ...state, sync_status: f.status, error: f.message };
                fail(f);
              }
            }
            results.set(sub, state);
          } catch (e) {
            const f = failureFromError(e, 'sync');
            fail(f);
            results.set(sub, { ...(old ?? { present: false }), sync_status: f.status, error: f.message, updated_at: now() });
          }
        }
        // Keys removed from the secret (secret-key granularity), or the other granularity's entries.
        for (const [sub, st] of Object.entries(link.entries)) {
          if (desired.has(sub)) continue;
          if (retry || !st.present || !st.external_name) {
            results.set(sub, retry && st.present ? st : null);
            continue;
          }
          try {
            await connector.remove(st.external_name, signal);
            results.set(sub, null);
          } catch (e) {
            const f = failureFromError(e, 'unsync of a removed key');
            fail(f);
            results.set(sub, { ...st, sync_status: f.status, error: f.message, updated_at: now() });
          }
        }
        if (!retry) syncedVersion = secret.version;
        linkStatus = null;
        if (desired.size === 0 && !retry) linkStatus = { status: 'SYNCED' };
      }
    }

    release(); // provider work done: the next operation may start while we store the outcome
    // Write back under the link lock (set/remove may have changed the record meanwhile).
    let final: LinkRecord | null = null;
    await this.locks.run(key, async () => {
      const cur = await store.getLink(type, name, id);
      if (!cur) return;
      if (removeLink && cur.generation === generation) {
        final = { ...cur, entries: Object.fromEntries([...results].filter(([, v]) => v !== null)) as Record<string, EntryState>, sync_status: 'UNSYNCED', updated_at: now() };
        delete final.error;
        await store.deleteLink(type, name, id);
        this.indexRemove(key);
        return;
      }
      const entries: Record<string, EntryState> = { ...cur.entries };
      for (const [sub, st] of results) {
        if (st === null) delete entries[sub];
        else entries[sub] = st;
      }
      // A link-wide failure (mount gone, bad configuration, KV read error) applies to every entry.
      if (linkStatus && ERROR_STATUSES.has(linkStatus.status)) {
        for (const [sub, st] of Object.entries(entries)) {
          if (!results.has(sub)) entries[sub] = { ...st, sync_status: linkStatus.status, error: linkStatus.error, updated_at: now() };
        }
      }
      // A newer trigger is queued behind this run: what we wrote is already stale.
      const queuedAgain = this.pendingByLink.has(key) && !cur.removing;
      if (queuedAgain) for (const [sub, st] of Object.entries(entries)) if (st.sync_status === 'SYNCED') entries[sub] = { ...st, sync_status: 'PENDING' };
      const statuses = Object.values(entries).map((e) => e.sync_status);
      let status = linkStatus?.status ?? (statuses.length ? worstStatus(statuses, 'PENDING') : cur.sync_status);
      if (queuedAgain && status === 'SYNCED') status = 'PENDING';
      const next: LinkRecord = { ...cur, entries, sync_status: status, updated_at: now(), dest_revision: dest.revision };
      const err = linkStatus?.error ?? Object.values(entries).find((e) => ERROR_STATUSES.has(e.sync_status))?.error;
      if (err && ERROR_STATUSES.has(next.sync_status)) next.error = err;
      else delete next.error;
      if (syncedVersion !== undefined) next.synced_version = syncedVersion;
      // The outcome replaces the in-flight status in the same step (no flash of the stale record).
      this.activity.delete(key);
      await store.putLink(next);
      final = next;
    });
    this.setActivity(key, null);
    if (removeLink) await this.afterLinkRemoved(type, name);
    else if (dest.purge_initiated_at && !retry && final) await this.notePurgeError(type, name, (final as LinkRecord).error ?? 'unsync failed');
    return { failure: retry, link: final };
  }

  /** After a link was dropped: finish a purge when it was the last one. */
  private async afterLinkRemoved(type: string, name: string): Promise<void> {
    const { store } = this.deps;
    const dest = await store.getDest(type, name);
    if (!dest?.purge_initiated_at) return;
    if ((await store.linkIds(type, name)).length > 0) return;
    await store.deleteDest(type, name);
    store.forgetLinks(type, name);
    this.dropConnector(type, name);
  }

  private async notePurgeError(type: string, name: string, error: string): Promise<void> {
    const dest = await this.deps.store.getDest(type, name);
    if (!dest?.purge_initiated_at) return;
    await this.deps.store.putDest({ ...dest, purge_error: error });
  }

  /** Periodic scan: re-queue links whose secret changed, failed retryably, or were left PENDING. */
  async reconcile(): Promise<number> {
    const { store, kv } = this.deps;
    let queued = 0;
    for (const type of Object.keys(DESTINATION_TYPES)) {
      for (const name of await store.destNames(type as never)) {
        const dest = await store.getDest(type, name);
        if (!dest) continue;
        for (const id of await store.linkIds(type, name)) {
          if (this.closed) return queued;
          const key = linkKey(type, name, id);
          if (this.busy(key)) continue;
          const link = await store.getLink(type, name, id);
          if (!link) continue;
          let due = Boolean(link.removing || dest.purge_initiated_at);
          const statuses = [link.sync_status, ...Object.values(link.entries).map((e) => e.sync_status)];
          if (!due && statuses.some((s) => RECONCILE_RETRY.has(s))) due = true;
          if (!due && statuses.includes('CLIENT_SIDE_ERROR') && link.dest_revision !== dest.revision) due = true;
          if (!due) {
            const mount = kv.mount(link.accessor);
            if (mount) {
              try {
                const cur = await kv.readLatest(mount, link.secret_name);
                const version = cur?.version ?? 0;
                if (version !== (link.synced_version ?? -1)) due = true;
              } catch {
                due = true;
              }
            }
          }
          if (!due) continue;
          if (!this.hasRoom(key)) return queued;
          await this.enqueue(key);
          queued++;
        }
      }
    }
    return queued;
  }

  private scheduleReconcile(delay: number): void {
    if (this.closed) return;
    this.reconcileTimer = setTimeout(() => {
      this.reconcile()
        .catch((e) => this.deps.logger.warn('sync reconciliation failed', { error: (e as Error)?.message }))
        .finally(() => this.scheduleReconcile(this.deps.tuning.reconcileMs));
    }, delay);
    this.reconcileTimer.unref?.();
  }

  /** Stop timers, abort running operations and wait for them (their durable entries stay queued). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.delayTimer) clearTimeout(this.delayTimer);
    if (this.reconcileTimer) clearTimeout(this.reconcileTimer);
    if (this.persistTimer) clearTimeout(this.persistTimer);
    for (const c of this.running.values()) c.abort(Object.assign(new Error('shutting down'), { name: 'AbortError' }));
    await Promise.allSettled([...this.inflight]);
    // Queued and interrupted operations keep their place (and backoff state) across the restart.
    for (const op of this.ops.values()) if (!op.stored) void this.persist(op);
    await Promise.allSettled([...this.ops.values()].map((op) => op.io));
    for (const { connector } of this.connectors.values()) connector.close();
    this.connectors.clear();
    for (const ws of this.waiters.values()) for (const w of ws) w.fire(null);
    this.waiters.clear();
    this.offered.clear();
  }
}

/** Parsed name templates by source (a destination's links share one; parsing per operation showed in profiles). */
const templates = new Map<string, NameTemplate>();

function parsedTemplate(source: string): NameTemplate {
  let t = templates.get(source);
  if (!t) {
    t = NameTemplate.parse(source);
    if (templates.size >= 256) templates.clear();
    templates.set(source, t);
  }
  return t;
}

/** `type/name` of a link key. */
function destOf(link: string): string {
  const p = parseLinkKey(link);
  return `${p.type}/${p.name}`;
}

/** Accessor and secret name encoded in a link id. */
export function secretOfId(id: string): { accessor: string; secret: string } {
  const s = decodeURIComponent(id);
  const i = s.indexOf('/');
  return { accessor: s.slice(0, i), secret: s.slice(i + 1) };
}

/** A log-safe label of a link (destination and accessor; secret names are not secret but stay out of logs anyway). */
function safeLinkLabel(link: string): string {
  const p = parseLinkKey(link);
  return `${p.type}/${p.name}/${secretOfId(p.id).accessor}`;
}
