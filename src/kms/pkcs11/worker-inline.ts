/**
 * The worker's side of the same-thread path for fast tokens (inline-gcm.ts runs on the main thread):
 * the gate in the shared control words that keeps main-thread calls out of the module while the
 * worker re-initializes it, and the measurement that decides whether a key's calls may run there.
 * Worker thread only.
 */
import type { InlineFacts } from './worker-protocol.js';
import { CTL } from './worker-ring.js';

/** Stop the main thread's same-thread calls: it learns new handles after the re-initialization. */
export function closeInlineGate(ctl: Int32Array): void {
  Atomics.store(ctl, CTL.INLINE_GATE, 0);
}

/** Wait until no main-thread call is inside the module (they take microseconds; the gate is closed). */
export function waitInlineIdle(ctl: Int32Array): void {
  while (Atomics.load(ctl, CTL.INLINE_BUSY) !== 0) Atomics.wait(ctl, CTL.INLINE_BUSY, 1, 1);
}

/**
 * Encrypts of 64 bytes timed to decide whether the main thread may call the key itself; the second
 * fastest counts (preemption on a busy machine only adds time; a slow HSM is slow every time).
 */
const PROBES = 8;

/**
 * Time `encrypt64` (one 64-byte AES-GCM encrypt on the key) here, off the event loop, so a slow HSM
 * is found out without blocking it; then open the gate for `gate` (the module's generation + 1) and
 * return what the main thread needs. Null when the key cannot encrypt.
 */
export function measureInline(
  ctl: Int32Array,
  gate: number,
  encrypt64: () => void,
  handles: Pick<InlineFacts, 'slot' | 'key' | 'forceRw'>,
): InlineFacts | null {
  const times: number[] = [];
  try {
    for (let i = 0; i < PROBES; i++) {
      const t0 = performance.now();
      encrypt64();
      times.push((performance.now() - t0) * 1000);
    }
  } catch {
    return null;
  }
  times.sort((a, b) => a - b);
  Atomics.store(ctl, CTL.INLINE_GATE, gate);
  return { ...handles, gate, micros: times[1]! };
}
