/**
 * Shared-memory rings between the main thread and a PKCS#11 worker: one SharedArrayBuffer holds a
 * few control words and two single-producer single-consumer byte rings (requests main -> worker,
 * results worker -> main). A hot call (AES-GCM, sign, RSA decrypt) is written into the ring and is
 * seen by a worker that is awake without any message; a message ("bell") is sent only to a side that
 * went to sleep. postMessage per batch cost each side a message event and a structured clone, and
 * every hand-off risked a thread wake-up (~80-100 us on the 2-core bench VM, more than the AES-GCM
 * call itself; bench managed-encrypt-aes-gcm).
 *
 * Frames are length-prefixed (u32, 4-byte aligned); a length of 0xffffffff marks "continue at the
 * start". The producer publishes a frame by storing the new tail with Atomics (release), the consumer
 * frees it by storing the new head; everything between is plain memory owned by one side at a time.
 */

/** Control words (indexes into the Int32Array over the first bytes of the buffer). */
export const CTL = {
  REQ_HEAD: 0,
  REQ_TAIL: 1,
  RES_HEAD: 2,
  RES_TAIL: 3,
  /** The worker's state: AWAKE (it will look at the request ring), ASLEEP (bell it), BELLED. */
  WORKER: 4,
  /** 1 while a bell to the main thread is on its way (the worker sends at most one at a time). */
  MAIN_BELL: 5,
  /**
   * The same-thread path (inline-gcm.ts): the worker's generation of the module (+1) while the main
   * thread may call it, 0 while the worker re-initializes it (C_Finalize ends every handle).
   */
  INLINE_GATE: 6,
  /** Main-thread native calls in progress (the worker waits for 0 after closing the gate). */
  INLINE_BUSY: 7,
} as const;

/** Worker states in CTL.WORKER. */
export const AWAKE = 0;
export const ASLEEP = 1;
export const BELLED = 2;

const CTL_BYTES = 64;
const WRAP = 0xffffffff;

/** Size of each ring; a frame larger than a quarter of it travels by message instead. */
export const RING_BYTES = 1 << 20;
/** Largest frame payload written into a ring. */
export const MAX_RING_FRAME = RING_BYTES >> 2;

/** A fresh shared buffer for one worker: both rings empty, the worker asleep. */
export function createRingBuffer(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(CTL_BYTES + 2 * RING_BYTES);
  Atomics.store(new Int32Array(sab, 0, CTL_BYTES / 4), CTL.WORKER, ASLEEP);
  return sab;
}

/** The control words of a ring buffer. */
export function controlOf(sab: SharedArrayBuffer): Int32Array {
  return new Int32Array(sab, 0, CTL_BYTES / 4);
}

const align = (n: number): number => (n + 3) & ~3;

/** One direction: a producer or a consumer of length-prefixed frames. */
export class ByteRing {
  /** Bytes of the ring (offsets below are relative to it). */
  readonly u8: Uint8Array;
  /** Where the ring starts in the shared buffer. */
  readonly base: number;
  readonly view: DataView;
  private readonly ctl: Int32Array;
  private readonly headIdx: number;
  private readonly tailIdx: number;
  /** The producer's next write position, or the consumer's next read position. */
  private pos = 0;
  /** Consumer: where the frame being read ends (the next head). */
  private next = 0;
  /** Producer: start of the reserved frame. */
  private reserved = -1;

  constructor(sab: SharedArrayBuffer, which: 'requests' | 'results') {
    const base = CTL_BYTES + (which === 'requests' ? 0 : RING_BYTES);
    this.base = base;
    this.u8 = new Uint8Array(sab, base, RING_BYTES);
    this.view = new DataView(sab, base, RING_BYTES);
    this.ctl = controlOf(sab);
    this.headIdx = which === 'requests' ? CTL.REQ_HEAD : CTL.RES_HEAD;
    this.tailIdx = which === 'requests' ? CTL.REQ_TAIL : CTL.RES_TAIL;
  }

  /**
   * Producer: room for a payload of up to `len` bytes; returns the payload's offset in `u8`, or -1
   * when the ring is full (the caller sends by message instead). Finish with commit().
   */
  reserve(len: number): number {
    const total = align(4 + len);
    const head = Atomics.load(this.ctl, this.headIdx);
    let t = this.pos;
    if (t >= head) {
      // Keep 4 bytes at the end for a wrap mark; the tail never reaches the head from behind.
      if (RING_BYTES - t < total + 4) {
        if (head <= total) return -1;
        this.view.setUint32(t, WRAP, true);
        t = 0;
      }
    } else if (head - t <= total) return -1;
    this.pos = t;
    this.reserved = t;
    return t + 4;
  }

  /** Producer: publish the reserved frame with its actual payload length (at most what was reserved). */
  commit(len: number): void {
    const t = this.reserved;
    this.view.setUint32(t, len, true);
    this.pos = t + align(4 + len);
    this.reserved = -1;
    Atomics.store(this.ctl, this.tailIdx, this.pos);
  }

  /** Consumer: whether a frame is waiting. */
  ready(): boolean {
    return Atomics.load(this.ctl, this.tailIdx) !== this.pos;
  }

  /**
   * Consumer: the next frame as [payload offset, length], or null when the ring is empty. The bytes
   * stay valid until release().
   */
  read(): [number, number] | null {
    const tail = Atomics.load(this.ctl, this.tailIdx);
    if (tail === this.pos) return null;
    let h = this.pos;
    let len = this.view.getUint32(h, true);
    if (len === WRAP) {
      h = 0;
      len = this.view.getUint32(0, true);
    }
    this.pos = h;
    this.next = h + align(4 + len);
    return [h + 4, len];
  }

  /** Consumer: free the frame read last. */
  release(): void {
    this.pos = this.next;
    Atomics.store(this.ctl, this.headIdx, this.pos);
  }
}
