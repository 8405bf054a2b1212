/**
 * One rate-limit quota (Vault's vault/quotas/quotas_rate_limit.go, behaviour only): each client
 * address may make `rate` requests per `interval`; the count starts over at each interval boundary
 * (fixed windows, as Vault's limiter store refills). With a `block_interval`, a client that goes over
 * is refused for that long. The decision is written into `verdict` (one object per quota, reused):
 * the hot path allocates nothing once a client is known.
 */

/** A quota as stored (sys/quotas/rate-limit/:name) and as its read answers. */
export interface RateLimitRecord {
  name: string;
  /** The path as given: "" (global), a mount ("transit/"), a path under it ("transit/encrypt/k") or a prefix ("transit/encrypt/*"). */
  path: string;
  /** The mount the path is under ("" for a global quota). */
  mount_path: string;
  /** The part of the path after the mount, without slashes at either end ("" for the whole mount); a trailing "*" makes it a prefix. */
  path_suffix: string;
  /** Role of a login path on an auth mount ("" for none). */
  role: string;
  rate: number;
  /** Seconds. */
  interval: number;
  /** Seconds a client stays refused after going over (0: not blocked, only limited). */
  block_interval: number;
  inheritable: boolean;
}

/** The outcome of one request under a quota (reused per quota: copy what you keep). */
export interface Verdict {
  allowed: boolean;
  /** Requests allowed per interval. */
  limit: number;
  /** Requests left in this interval. */
  remaining: number;
  /** Seconds until the count starts over (or, blocked, until the block ends). */
  reset: number;
}

interface Window {
  /** Index of the interval the count belongs to. */
  tick: number;
  count: number;
  /** Epoch ms until which the client is refused (0: not blocked). */
  blockedUntil: number;
  /** Epoch ms of the client's last request (stale clients are swept). */
  seen: number;
}

/** Clients not seen for this long are forgotten (Vault's limiter sweeps after 3 minutes too). */
const STALE_MS = 3 * 60_000;

/** The live limiter of one quota. */
export class RateLimiter {
  readonly verdict: Verdict = { allowed: true, limit: 0, remaining: 0, reset: 0 };
  private readonly clients = new Map<string, Window>();
  private readonly intervalMs: number;
  private readonly limit: number;
  private lastSweep = 0;

  constructor(readonly record: RateLimitRecord) {
    this.intervalMs = Math.max(1, record.interval) * 1000;
    // Vault rounds the rate to whole tokens per interval.
    this.limit = Math.max(1, Math.round(record.rate));
    this.verdict.limit = this.limit;
  }

  /** Count one request of `client` at `now` (epoch ms); the verdict says whether it may go on. */
  take(client: string, now: number): Verdict {
    const v = this.verdict;
    let w = this.clients.get(client);
    if (w === undefined) {
      if (now - this.lastSweep > STALE_MS) this.sweep(now);
      w = { tick: -1, count: 0, blockedUntil: 0, seen: now };
      this.clients.set(client, w);
    }
    w.seen = now;
    if (w.blockedUntil > now) {
      v.allowed = false;
      v.remaining = 0;
      v.reset = Math.ceil((w.blockedUntil - now) / 1000);
      return v;
    }
    const tick = Math.floor(now / this.intervalMs);
    if (tick !== w.tick) {
      w.tick = tick;
      w.count = 0;
    }
    v.reset = Math.ceil(((tick + 1) * this.intervalMs - now) / 1000);
    if (w.count < this.limit) {
      w.count++;
      v.allowed = true;
      v.remaining = this.limit - w.count;
      return v;
    }
    v.allowed = false;
    v.remaining = 0;
    if (this.record.block_interval > 0) {
      w.blockedUntil = now + this.record.block_interval * 1000;
      v.reset = this.record.block_interval;
    }
    return v;
  }

  /** Number of clients tracked (tests, sweeping). */
  get size(): number {
    return this.clients.size;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, w] of this.clients) if (now - w.seen > STALE_MS && w.blockedUntil <= now) this.clients.delete(k);
  }
}
