/**
 * The same-thread path for fast tokens: AES-GCM calls of a managed key made on the calling thread
 * (the daemon's event loop) instead of being handed to the PKCS#11 worker and back. SoftHSM2 answers
 * C_GenerateRandom + C_EncryptInit + C_Encrypt of a small buffer in ~25-30 us, less than the two
 * thread hops around it cost on a loaded 2-core machine (bench managed-encrypt-aes-gcm); pkcs11js's
 * calls are synchronous, so a slow HSM must never get here.
 *
 * Chosen per key, by measurement: when the key is opened the worker times a few 64-byte encrypts
 * (off the event loop) and the key goes inline only when the second fastest took at most `maxMicros`
 * (50 us by default; a network HSM takes milliseconds). While inline, calls are timed: when half of
 * a window of calls take more than 4x that (or fail), the worker measures the token again and a
 * token that got slow goes back to the worker (one call over 50 ms sends it there at once while the
 * worker measures again); it is measured again after 30 s. Payloads above 4 KiB always go to the worker.
 *
 * Module state is per process (reference managed-keys-wire.md 4.5): this thread loads the same module
 * (dlopen returns the worker's copy, already initialized by it; this side never calls C_Initialize
 * or C_Finalize), and its sessions on the token are logged in through the worker's login session.
 * It keeps one session per key (its calls never overlap). The worker owns recovery: before it
 * finalizes the module it closes a gate in the shared control words (CTL.INLINE_GATE) and waits
 * until no call of this thread is inside the module (CTL.INLINE_BUSY); a call that finds the gate
 * changed forgets its handles (they died with C_Finalize; closing them could close someone else's)
 * and learns new ones from the worker. Any failure here (a gone token, a failed tag check) is not
 * answered here: the caller hands the same request to the worker, which maps errors and recovers
 * as for every other call.
 */
import { requirePkcs11js } from '../../native/pkcs11js.js';
import type { Pkcs11Library } from './pkcs11-library.js';
import { CTL } from './worker-ring.js';
import type { InlineFacts } from './worker-protocol.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type P11 = any;

const CKF_SERIAL_SESSION = 4;
const CKF_RW_SESSION = 2;
const CKM_AES_GCM = 0x1087;
/** Largest payload handled on this thread (larger ones take longer; they go to the worker). */
export const INLINE_MAX_BYTES = 4096;
/** Default limit of a key's measured call time for the same-thread path (microseconds). */
export const INLINE_MAX_MICROS = 50;
/** Calls per judgement window while inline. */
const WINDOW = 32;
/** A call slower than this many times the limit counts as slow (wall time: preemption on a busy machine inflates some). */
const SLOW_FACTOR = 4;
/** One call this long (ms) sends the key back to the worker at once. */
const HUNG_MS = 50;
/** How long a key stays with the worker before it is measured again (ms). */
const RETRY_MS = 30_000;
/** After a failed attempt to learn the handles (token away, worker restarting). */
const RELEARN_MS = 1_000;

/** This thread's handle on each module path (the module itself is the worker's, see above). */
const modules = new Map<string, P11>();

function moduleFor(path: string): P11 {
  let p = modules.get(path);
  if (!p) {
    const mod = requirePkcs11js() as { PKCS11: new () => P11 };
    p = new mod.PKCS11();
    p.load(path);
    modules.set(path, p);
  }
  return p;
}

/** AES-GCM parameters as Pkcs11Key builds them. */
export interface GcmParams {
  iv: Uint8Array;
  aad?: Buffer;
  tagBits: number;
}

interface Live {
  ctl: Int32Array;
  gate: number;
  p: P11;
  slot: Buffer;
  key: Buffer;
  flags: number;
  session: Buffer | null;
}

/**
 * An empty input as a view into a real allocation: pkcs11js passes an empty Buffer's NULL pointer
 * on, which SoftHSM2 refuses (CKR_ARGUMENTS_BAD); the worker's inputs are views into its ring.
 */
const EMPTY = Buffer.alloc(8).subarray(0, 0);

const asBuf = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));

/** One managed AES-GCM key's same-thread path. */
export class InlineGcm {
  private live: Live | null = null;
  private learning: Promise<void> | null = null;
  private retryAt = 0;
  private calls = 0;
  private slow = 0;
  /** Calls answered on this thread (tests, bench). */
  answered = 0;
  /** The worker's last measurement of one call (microseconds), or null before the first. */
  measuredMicros: number | null = null;

  constructor(
    private readonly lib: Pkcs11Library,
    private readonly ref: string,
    /** Limit of the measured call time; 0 keeps every call in the worker. */
    private maxMicros: number,
  ) {}

  /** Whether calls currently run on this thread. */
  get active(): boolean {
    return this.live !== null;
  }

  /** Ask the worker to measure the key and hand over its handles (never rejects). */
  learn(): Promise<void> {
    if (this.maxMicros <= 0) return Promise.resolve();
    this.learning ??= this.lib.call<InlineFacts | null>({ op: 'inline', ref: this.ref }).then(
      (f) => {
        this.learning = null;
        if (this.maxMicros <= 0) return;
        const ctl = this.lib.inlineControl();
        if (f) this.measuredMicros = f.micros;
        const l = this.live;
        if (!f || !ctl || f.micros > this.maxMicros) {
          if (l) this.demote(l);
          else this.retryAt = performance.now() + RETRY_MS;
          return;
        }
        this.calls = this.slow = 0;
        // Measured again while inline (see judge): same handles, keep going.
        if (l && l.ctl === ctl && l.gate === f.gate) return;
        try {
          this.live = {
            ctl,
            gate: f.gate,
            p: moduleFor(this.lib.modulePath),
            slot: asBuf(f.slot),
            key: asBuf(f.key),
            flags: CKF_SERIAL_SESSION | (f.forceRw ? CKF_RW_SESSION : 0),
            session: null,
          };
          this.calls = this.slow = 0;
        } catch {
          this.retryAt = performance.now() + RETRY_MS;
        }
      },
      () => {
        this.learning = null;
        this.retryAt = performance.now() + RELEARN_MS;
      },
    );
    return this.learning;
  }

  /**
   * Encrypt (`iv || ct || tag`) or decrypt on this thread; undefined when the worker should do it
   * (not a fast key, handles stale, a large payload, or the call failed: the worker then makes it
   * again and answers with its error mapping and recovery).
   */
  run(op: 'encrypt' | 'decrypt', params: GcmParams, data: Buffer, outLen: number): Buffer | undefined {
    const l = this.live;
    if (!l) {
      if (this.maxMicros > 0 && !this.learning && performance.now() >= this.retryAt) void this.learn();
      return undefined;
    }
    if (data.length > INLINE_MAX_BYTES) return undefined;
    const ctl = l.ctl;
    Atomics.add(ctl, CTL.INLINE_BUSY, 1);
    try {
      if (Atomics.load(ctl, CTL.INLINE_GATE) !== l.gate || this.lib.inlineControl() !== ctl) {
        // The worker re-initialized the module (or was replaced): these handles are gone.
        this.live = null;
        return undefined;
      }
      const t0 = performance.now();
      let out: Buffer;
      try {
        out = gcm(l, op, params, data, outLen);
      } catch {
        // The session may hold a half-done operation: close it (inside the gate, so it is ours).
        this.closeSession(l);
        this.judge(l, 0, true);
        return undefined;
      }
      this.judge(l, performance.now() - t0);
      this.answered++;
      return out;
    } finally {
      Atomics.sub(ctl, CTL.INLINE_BUSY, 1);
    }
  }

  /**
   * Count a call (ms; a failure counts as slow). When half of a window was slow, the worker measures
   * the token again (wall time here also counts time this thread was not scheduled, which a busy
   * machine adds and the worker's second-fastest call does not): a token that got slow goes back to
   * the worker then. One call over HUNG_MS sends it back at once.
   */
  private judge(l: Live, ms: number, failed = false): void {
    // Not inline while the worker looks (it may be this thread that was not scheduled, not the token).
    if (ms > HUNG_MS) return this.demote(l, 0);
    if (failed || ms * 1000 > this.maxMicros * SLOW_FACTOR) this.slow++;
    if (++this.calls < WINDOW) return;
    const slow = this.slow * 2 >= WINDOW;
    this.calls = this.slow = 0;
    if (slow && !this.learning) void this.learn();
  }

  /** Back to the worker, measured again after `retryMs`. */
  private demote(l: Live, retryMs = RETRY_MS): void {
    if (this.live === l) this.live = null;
    this.retryAt = performance.now() + retryMs;
    Atomics.add(l.ctl, CTL.INLINE_BUSY, 1);
    try {
      if (Atomics.load(l.ctl, CTL.INLINE_GATE) === l.gate && this.lib.inlineControl() === l.ctl) this.closeSession(l);
    } finally {
      Atomics.sub(l.ctl, CTL.INLINE_BUSY, 1);
    }
  }

  private closeSession(l: Live): void {
    const s = l.session;
    l.session = null;
    if (!s) return;
    try {
      l.p.C_CloseSession(s);
    } catch {
      /* already gone */
    }
  }

  /** Close this thread's session (the key is closing). */
  close(): void {
    const l = this.live;
    this.maxMicros = 0;
    if (l) this.demote(l);
  }
}

/** The worker's gcmInto, on this thread: C_GenerateRandom (unless an IV is given), C_EncryptInit, C_Encrypt (or decrypt). */
function gcm(l: Live, op: 'encrypt' | 'decrypt', params: GcmParams, data: Buffer, outLen: number): Buffer {
  const p = l.p;
  const s = (l.session ??= p.C_OpenSession(l.slot, l.flags) as Buffer);
  if (op === 'encrypt') {
    const ivLen = params.iv.length || 12;
    const out = Buffer.allocUnsafe(ivLen + outLen);
    const iv = out.subarray(0, ivLen);
    if (params.iv.length) iv.set(params.iv);
    else p.C_GenerateRandom(s, iv);
    p.C_EncryptInit(
      s,
      {
        mechanism: CKM_AES_GCM,
        parameter: { type: 25, iv, ivBits: ivLen * 8, aad: params.aad, tagBits: params.tagBits },
      },
      l.key,
    );
    const n = ivLen + (p.C_Encrypt(s, data.length ? data : EMPTY, out.subarray(ivLen)) as Buffer).length;
    return out.subarray(0, n);
  }
  p.C_DecryptInit(
    s,
    {
      mechanism: CKM_AES_GCM,
      parameter: {
        type: 25,
        iv: asBuf(params.iv),
        ivBits: params.iv.length * 8,
        aad: params.aad,
        tagBits: params.tagBits,
      },
    },
    l.key,
  );
  const out = Buffer.allocUnsafe(outLen);
  return out.subarray(0, (p.C_Decrypt(s, data, out) as Buffer).length);
}
