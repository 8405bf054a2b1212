/**
 * The sync worker: runs the operations of the op queue (op-queue.ts) within the global and
 * per-destination limits (destination-slots.ts), one attempt per operation (link-sync.ts) whose
 * outcome is applied to the link record (apply-outcome.ts) and stored under the link lock; a
 * retryable failure goes back to the queue with exponential backoff and jitter; reconciliation
 * (reconcile.ts) re-queues what is due. Operations are idempotent (put the current value / delete
 * the name), so one interrupted by a crash simply runs again after restart.
 */
import type { Clock, Logger } from '../framework/context.js';
import { KeyedLock } from '../framework/keyed-lock.js';
import { applyOutcome, type LinkOutcome } from './apply-outcome.js';
import { AttemptWaiters } from './attempt-waiters.js';
import { retryDelay } from './backoff.js';
import { ConnectorCache, type ConnectFn } from './connector-cache.js';
import type { IdentityTokenSigner } from './identity-token.js';
import { DestinationSlots } from './destination-slots.js';
import { failureFromError, type SyncFailure } from './failure.js';
import type { KvSource } from './kv-source.js';
import { LinkIndex, secretOfId } from './link-index.js';
import { syncLink } from './link-sync.js';
import { OpQueue, type Op } from './op-queue.js';
import { Reconciler } from './reconcile.js';
import { SecretOffers, type SecretVersion } from './secret-offers.js';
import type { SyncStore } from './store.js';
import type { SyncTuning } from './tuning.js';
import { parseLinkKey, type ActivityStatus, type DestinationRecord, type LinkRecord } from './types.js';

/** What one operation came to: the failure to retry, if any, and the link as stored (null: none or dropped). */
interface OpResult {
  failure?: SyncFailure;
  link: LinkRecord | null;
}

/** The pool running the queue, and the state the service reads from it. */
export class Syncer {
  private readonly queue: OpQueue;
  private readonly slots: DestinationSlots;
  private readonly connectors: ConnectorCache;
  private readonly offers: SecretOffers;
  private readonly waiters = new AttemptWaiters();
  private readonly reconciler: Reconciler;
  /** Which links each secret has. */
  readonly index = new LinkIndex();
  /** One writer per link record (the worker, set, remove, KV events). */
  readonly locks = new KeyedLock();
  /** Operations running, by link. */
  private readonly running = new Map<string, AbortController>();
  private readonly inflight = new Set<Promise<void>>();
  /** Links the worker is pushing or deleting at the provider right now (never stored). */
  private readonly activity = new Map<string, ActivityStatus>();
  /** Told when a link's in-flight status starts or ends (the service refreshes its association maps). */
  onActivity: ((link: string) => void) | null = null;
  private rr = 0;
  private paused = false;
  private started = false;
  private closed = false;
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
      /** Identity tokens for connectors using workload identity federation (identity-token.ts). */
      identityToken?: IdentityTokenSigner;
    },
  ) {
    const { store, kv, clock, logger } = deps;
    this.random = deps.random ?? Math.random;
    this.queue = new OpQueue({
      store,
      clock,
      logger,
      persistAfterMs: () => this.deps.tuning.persistAfterMs,
      onWake: () => this.pump(),
    });
    this.slots = new DestinationSlots(clock, () => this.deps.tuning.perDestination);
    this.connectors = new ConnectorCache({
      store,
      clock,
      logger,
      timeoutMs: () => this.deps.tuning.timeoutMs,
      connect: deps.connect,
      ...(deps.identityToken ? { identityToken: deps.identityToken } : {}),
    });
    this.offers = new SecretOffers(clock);
    this.reconciler = new Reconciler({
      store,
      kv,
      logger,
      queue: this,
      intervalMs: () => this.deps.tuning.reconcileMs,
    });
  }

  get tuning(): SyncTuning {
    return this.deps.tuning;
  }

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
    const cfg = await this.deps.store.config();
    this.paused = cfg.disabled;
    this.queue.capacity = cfg.queue_capacity;
    await this.index.load(this.deps.store);
    await this.queue.load();
    // Created now rather than inside a link's first attempt (which would then store two records).
    await this.deps.store.valueMacKey();
    this.started = true;
    this.reconciler.schedule(0);
    this.pump();
  }

  /** Apply sys/sync/config. */
  configure(cfg: { disabled: boolean; queue_capacity: number }): void {
    this.paused = cfg.disabled;
    this.queue.capacity = cfg.queue_capacity;
    this.pump();
  }

  /** Queued operations (including delayed retries). */
  get queued(): number {
    return this.queue.size;
  }

  /** Whether `link` can be queued without exceeding the capacity. */
  hasRoom(link: string): boolean {
    return this.queue.hasRoom(link);
  }

  /** Whether an operation on `link` is queued or running. */
  busy(link: string): boolean {
    return this.queue.has(link) || this.running.has(link);
  }

  /** Queue an operation on `link` (coalesced with a queued one; `now` cancels a backoff wait). */
  enqueue(link: string, opts: { now?: boolean } = {}): Promise<void> {
    return this.queue.enqueue(link, opts, () => this.pump());
  }

  /** A KV secret changed somewhere (called synchronously from the KV event): offered reads are stale. */
  noteKvChange(): void {
    this.offers.noteKvChange();
  }

  /** A marker to take before reading a secret that will be offered to `offerSecret`. */
  get kvChanges(): number {
    return this.offers.marker;
  }

  /**
   * Offer the latest version of a link's secret, read after `kvChanges` returned `marker`, to the
   * link's next attempt, which then need not read it again (set reads it anyway to check that the
   * secret exists). Ignored when any KV change has happened since the marker; an offer is used
   * once, and only within a second.
   */
  offerSecret(link: string, secret: SecretVersion, marker: number): void {
    if (this.closed) return;
    this.offers.offer(link, secret, marker);
  }

  /** The number of attempts started so far (take it before queueing the change to wait for). */
  attemptMark(): number {
    return this.waiters.mark;
  }

  /**
   * Resolve with the link after an attempt that started after `mark` completes (null when
   * dropped), or undefined after `ms`. An attempt already running when the caller queued its change
   * may not include it.
   */
  waitForAttempt(link: string, ms: number, mark = this.waiters.mark): Promise<LinkRecord | null | undefined> {
    if (ms <= 0 || this.paused) return Promise.resolve(undefined);
    return this.waiters.wait(link, ms, mark);
  }

  /** Forget a destination's connector (after delete). */
  dropConnector(type: string, name: string): void {
    this.connectors.drop(type, name);
  }

  /** Periodic scan: re-queue links whose secret changed, failed retryably, or were left PENDING. */
  reconcile(): Promise<number> {
    return this.reconciler.scan();
  }

  /** Start as many ready operations as the limits allow. */
  private pump(): void {
    if (!this.started || this.closed || this.paused) return;
    const { concurrency } = this.deps.tuning;
    const dests = this.queue.readyDests();
    if (dests.length === 0) return;
    let progressed = true;
    // Operations storing their outcome hold no slot, but at most as many again may be in flight.
    const room = () => this.slots.admitted < concurrency && this.running.size < concurrency * 2;
    while (room() && progressed) {
      progressed = false;
      for (let i = 0; i < dests.length && room(); i++) {
        const dest = dests[(this.rr + i) % dests.length]!;
        if (!this.queue.hasReady(dest) || !this.slots.canAdmit(dest)) continue;
        const pick = this.queue.takeReady(dest, (op) => !this.running.has(op.link));
        if (!pick) continue;
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
    this.queue.started(op);
    const ctrl = new AbortController();
    this.running.set(op.link, ctrl);
    const giveBack = this.slots.admit(op.dest);
    const release = () => {
      if (giveBack()) this.pump();
    };
    const timer = setTimeout(
      () => ctrl.abort(Object.assign(new Error('operation timed out'), { name: 'TimeoutError' })),
      this.deps.tuning.opTimeoutMs,
    );
    timer.unref?.();
    const p = this.runOp(op, ctrl.signal, release, this.waiters.next())
      .catch((e) =>
        this.deps.logger.error('sync operation failed unexpectedly', {
          link: safeLinkLabel(op.link),
          error: (e as Error)?.name,
        }),
      )
      .finally(() => {
        clearTimeout(timer);
        this.setActivity(op.link, null);
        this.running.delete(op.link);
        this.inflight.delete(p);
        giveBack();
        this.pump(); // the slot is free, and the link may have been queued again meanwhile
      });
    this.inflight.add(p);
  }

  private async runOp(op: Op, signal: AbortSignal, release: () => void, startNo: number): Promise<void> {
    let result: OpResult;
    try {
      result = await this.process(op.link, signal, release);
    } catch (e) {
      result = { failure: failureFromError(e, 'sync'), link: null };
    }
    if (this.closed && signal.aborted) return; // shutting down: the durable entry runs again after restart
    const f = result.failure;
    const superseded = this.queue.has(op.link);
    if (f?.retryable && !superseded) {
      // Self-healing (issue 19): a failure that can pass is retried until it succeeds (see retryDelay).
      op.attempts++;
      const now = this.deps.clock.now();
      const policy = this.deps.tuning.backoff;
      const delay = retryDelay(policy, op.attempts, f.opts, this.random);
      op.notBefore = now + delay;
      if (f.opts.rateLimited) this.holdDestination(op.dest, now + Math.min(policy.maxMs, f.opts.retryAfterMs ?? delay));
      await this.queue.retry(op);
    } else {
      await this.queue.finish(op);
    }
    this.waiters.settle(op.link, startNo, result.link);
  }

  /** Start nothing of `dest` before `until` (a rate limit); the queue's timer wakes the pump then. */
  private holdDestination(dest: string, until: number): void {
    if (!this.slots.hold(dest, until)) return;
    this.queue.wakeAt(until);
    this.deps.logger.warn('sync: destination rate limited; its operations wait', {
      destination: dest,
      wait_ms: Math.max(0, until - this.deps.clock.now()),
    });
  }

  /** Bring one link to its desired state; returns the failure that should be retried, if any. */
  private async process(key: string, signal: AbortSignal, release: () => void): Promise<OpResult> {
    const attempt = await syncLink(key, signal, {
      store: this.deps.store,
      kv: this.deps.kv,
      clock: this.deps.clock,
      offers: this.offers,
      connectorFor: (dest, onCall) =>
        this.slots.gated(this.connectors.of(dest), `${dest.type}/${dest.name}`, signal, onCall),
      setActivity: (a) => this.setActivity(key, a),
    });
    if (attempt.kind === 'missing') return { link: null };
    if (attempt.kind === 'orphan') {
      const { type, name, id } = parseLinkKey(key);
      await this.locks.run(key, async () => {
        await this.deps.store.deleteLink(type, name, id);
        this.index.remove(key);
      });
      return { link: null };
    }
    release(); // provider work done: the next operation may start while we store the outcome
    const { dest, outcome } = attempt;
    const final = await this.storeOutcome(key, dest, outcome);
    this.setActivity(key, null);
    if (outcome.removeLink) await this.afterLinkRemoved(dest.type, dest.name);
    else if (dest.purge_initiated_at && !outcome.retry && final)
      await this.notePurgeError(dest.type, dest.name, final.error ?? 'unsync failed');
    return { failure: outcome.retry, link: final };
  }

  /** Apply an outcome to the link as stored now, under the link lock (set/remove may have changed it meanwhile). */
  private async storeOutcome(key: string, dest: DestinationRecord, outcome: LinkOutcome): Promise<LinkRecord | null> {
    const { store, clock } = this.deps;
    const { type, name, id } = parseLinkKey(key);
    let final: LinkRecord | null = null;
    await this.locks.run(key, async () => {
      const cur = await store.getLink(type, name, id);
      if (!cur) return;
      const now = new Date(clock.now()).toISOString();
      const applied = applyOutcome(cur, outcome, {
        now,
        queuedAgain: this.queue.has(key) && !cur.removing,
        destRevision: dest.revision,
      });
      if (applied.drop) {
        final = applied.record;
        await store.deleteLink(type, name, id);
        this.index.remove(key);
        return;
      }
      // The outcome replaces the in-flight status in the same step (no flash of the stale record).
      this.activity.delete(key);
      await store.putLink(applied.record);
      final = applied.record;
    });
    return final;
  }

  /** After a link was dropped: finish a purge when it was the last one. */
  private async afterLinkRemoved(type: string, name: string): Promise<void> {
    const { store } = this.deps;
    const dest = await store.getDest(type, name);
    if (!dest?.purge_initiated_at) return;
    if ((await store.linkIds(type, name)).length > 0) return;
    await store.deleteDest(type, name);
    store.forgetLinks(type, name);
    this.connectors.drop(type, name);
  }

  private async notePurgeError(type: string, name: string, error: string): Promise<void> {
    const dest = await this.deps.store.getDest(type, name);
    if (!dest?.purge_initiated_at) return;
    await this.deps.store.putDest({ ...dest, purge_error: error });
  }

  /** Stop timers, abort running operations and wait for them (their durable entries stay queued). */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.stop();
    this.reconciler.stop();
    for (const c of this.running.values()) c.abort(Object.assign(new Error('shutting down'), { name: 'AbortError' }));
    await Promise.allSettled([...this.inflight]);
    // Queued and interrupted operations keep their place (and backoff state) across the restart.
    await this.queue.persistAll();
    this.connectors.closeAll();
    this.waiters.closeAll();
    this.offers.clear();
  }
}

/** A log-safe label of a link (destination and accessor; secret names are not secret but stay out of logs anyway). */
function safeLinkLabel(link: string): string {
  const p = parseLinkKey(link);
  return `${p.type}/${p.name}/${secretOfId(p.id).accessor}`;
}
