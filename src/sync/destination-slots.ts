/**
 * Per-destination limits of the sync worker: admission of operations (global `concurrency`, and
 * `perDestination` x PIPELINE_DEPTH per destination), provider-call slots (`perDestination` calls
 * in flight per destination, first come first served), and holds after a provider's rate limit.
 */
import type { Clock } from '../framework/context.js';
import type { Connector } from './destinations/common.js';
import { SyncFailure } from './failure.js';

/** Operations admitted per destination, per provider slot (see SyncTuning.perDestination). */
export const PIPELINE_DEPTH = 2;

/** Provider slots of one destination: calls in flight and the calls waiting for one, in order. */
interface Gate {
  active: number;
  waiting: Array<() => void>;
}

/** Admission counts, provider slots and rate-limit holds, by destination (`type/name`). */
export class DestinationSlots {
  /** Operations holding an admission slot, over all destinations. */
  private admittedCount = 0;
  private readonly admittedPerDest = new Map<string, number>();
  private readonly gates = new Map<string, Gate>();
  /**
   * Destinations the provider throttled, and until when: none of their operations starts before
   * (issue 19: one 403/429 rate limit slows every association of the destination down, not only
   * the one that hit it, so a large sync does not keep hammering a provider that asked us to wait).
   */
  private readonly heldUntil = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    /** Provider calls in flight per destination (read at each use: tuning may be replaced in tests). */
    private readonly perDestination: () => number,
  ) {}

  /** Operations holding an admission slot. */
  get admitted(): number {
    return this.admittedCount;
  }

  /** Whether an operation of `dest` may be admitted now (below its limit, not held); an expired hold is dropped. */
  canAdmit(dest: string): boolean {
    if ((this.admittedPerDest.get(dest) ?? 0) >= this.perDestination() * PIPELINE_DEPTH) return false;
    const hold = this.heldUntil.get(dest);
    if (hold !== undefined) {
      if (hold > this.clock.now()) return false;
      this.heldUntil.delete(dest);
    }
    return true;
  }

  /** Admit an operation of `dest`; the returned function gives its slot back (once). */
  admit(dest: string): () => boolean {
    this.admittedCount++;
    this.admittedPerDest.set(dest, (this.admittedPerDest.get(dest) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return false;
      held = false;
      this.admittedCount--;
      const n = (this.admittedPerDest.get(dest) ?? 1) - 1;
      if (n <= 0) this.admittedPerDest.delete(dest);
      else this.admittedPerDest.set(dest, n);
      return true;
    };
  }

  /** Hold `dest` until `until` (a rate limit); false when it is already held at least that long. */
  hold(dest: string, until: number): boolean {
    if ((this.heldUntil.get(dest) ?? 0) >= until) return false;
    this.heldUntil.set(dest, until);
    return true;
  }

  /** Until when a destination is held after a rate limit (0: not held). */
  heldUntilOf(dest: string): number {
    const t = this.heldUntil.get(dest) ?? 0;
    return t > this.clock.now() ? t : 0;
  }

  /** `c` with every provider call taking a slot of `dest`; `onCall` runs as a call starts. */
  gated(c: Connector, dest: string, signal: AbortSignal, onCall: () => void): Connector {
    return {
      put: (name, value, sig, opts) => this.inSlot(dest, signal, () => (onCall(), c.put(name, value, sig, opts))),
      remove: (name, sig) => this.inSlot(dest, signal, () => (onCall(), c.remove(name, sig))),
      close: () => c.close(),
    };
  }

  /** Run one provider call of `dest` in one of its `perDestination` slots (first come, first served). */
  private async inSlot<T>(dest: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    let g = this.gates.get(dest);
    if (!g) this.gates.set(dest, (g = { active: 0, waiting: [] }));
    if (g.active < this.perDestination()) g.active++;
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
        throw new SyncFailure(
          'EXTERNAL_SERVICE_ERROR',
          'destination rate limited by the provider; waiting before sending',
          { retryable: true, rateLimited: true, retryAfterMs: held - this.clock.now() },
        );
      }
      return await call();
    } finally {
      const next = g.waiting.shift();
      if (next) next();
      else if (--g.active === 0) this.gates.delete(dest);
    }
  }
}
