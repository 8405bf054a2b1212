/**
 * The shared-memory rings between the main thread and a PKCS#11 worker (src/kms/pkcs11/worker-ring.ts):
 * frames come out in order and intact across many wrap-arounds, a full ring refuses a frame instead
 * of overwriting unread bytes, and a frame reserved but never committed is invisible. Cross-thread
 * use is covered by test/unit/kms/pkcs11-provider.test.ts (a real worker and SoftHSM2).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ByteRing, MAX_RING_FRAME, RING_BYTES, createRingBuffer } from '../../../src/kms/pkcs11/worker-ring.js';

function pair() {
  const sab = createRingBuffer();
  return { w: new ByteRing(sab, 'requests'), r: new ByteRing(sab, 'requests'), other: new ByteRing(sab, 'results') };
}

function put(w: ByteRing, bytes: Buffer): boolean {
  const at = w.reserve(bytes.length);
  if (at < 0) return false;
  w.u8.set(bytes, at);
  w.commit(bytes.length);
  return true;
}

function take(r: ByteRing): Buffer | null {
  const f = r.read();
  if (!f) return null;
  const out = Buffer.from(r.u8.subarray(f[0], f[0] + f[1]));
  r.release();
  return out;
}

describe('pkcs11 worker rings', () => {
  it('keeps frames in order and intact over many wrap-arounds, with the consumer lagging behind', () => {
    const { w, r } = pair();
    const queue: Buffer[] = [];
    let written = 0;
    let seed = 1;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    while (written < 12 * RING_BYTES) {
      // Odd sizes (alignment), empty frames, and now and then a large one.
      const len = rnd(10) === 0 ? rnd(200_000) : rnd(3) === 0 ? 0 : rnd(700);
      const b = randomBytes(len);
      if (put(w, b)) {
        queue.push(b);
        written += len + 4;
      }
      // The consumer reads in bursts, so the ring runs full now and then.
      if (rnd(4) === 0 || queue.length > 5000) {
        for (let n = rnd(queue.length + 1); n > 0; n--) expect(take(r)!.equals(queue.shift()!)).toBe(true);
      }
    }
    while (queue.length) expect(take(r)!.equals(queue.shift()!)).toBe(true);
    expect(take(r)).toBeNull();
    expect(r.ready()).toBe(false);
  });

  it('refuses a frame when full instead of overwriting unread bytes, and takes it once there is room', () => {
    const { w, r } = pair();
    const frames: Buffer[] = [];
    for (;;) {
      const b = randomBytes(MAX_RING_FRAME - 100);
      if (!put(w, b)) break;
      frames.push(b);
    }
    expect(frames.length).toBeGreaterThanOrEqual(3);
    const small = randomBytes(10_000);
    expect(put(w, small)).toBe(false);
    // One frame read: the small one fits (at the start of the ring), a large one does not yet.
    expect(take(r)!.equals(frames.shift()!)).toBe(true);
    expect(put(w, small)).toBe(true);
    const late = randomBytes(MAX_RING_FRAME - 100);
    expect(put(w, late)).toBe(false);
    expect(take(r)!.equals(frames.shift()!)).toBe(true);
    expect(put(w, late)).toBe(true);
    while (frames.length) expect(take(r)!.equals(frames.shift()!)).toBe(true);
    expect(take(r)!.equals(small)).toBe(true);
    expect(take(r)!.equals(late)).toBe(true);
    expect(take(r)).toBeNull();
  });

  it('a reserved frame is invisible until committed; an abandoned reservation is overwritten; a shorter commit is read at its length', () => {
    const { w, r, other } = pair();
    const at = w.reserve(100);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(r.ready()).toBe(false);
    // Abandoned (the token failed mid-call): the next frame takes its place.
    const b = randomBytes(50);
    expect(put(w, b)).toBe(true);
    const at2 = w.reserve(100);
    w.u8.set(Buffer.alloc(20, 7), at2);
    w.commit(20);
    expect(take(r)!.equals(b)).toBe(true);
    expect(take(r)!.equals(Buffer.alloc(20, 7))).toBe(true);
    // The two directions do not share bytes.
    expect(other.ready()).toBe(false);
  });
});
