/** Tuning of the sync worker: limits, timeouts, backoff and pacing (daemon environment; docs/sync.md). */
import type { BackoffPolicy } from './backoff.js';

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
