/**
 * The packed form of PKCS#11 worker calls (src/kms/pkcs11/worker-frames.ts): every field of every
 * hot request and result survives the trip, an empty AAD stays distinct from no AAD, and byte fields
 * come back as Buffers at the right offsets of one buffer.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeRequests,
  decodeResults,
  encodeRequests,
  encodeResults,
  isHot,
  type HotRequest,
} from '../../../src/kms/pkcs11/worker-frames.js';

describe('pkcs11 worker frames', () => {
  const reqs: HotRequest[] = [
    { id: 1, op: 'sign', ref: 'k1-a', mechanism: 0x0001, params: { type: 'none' }, data: randomBytes(51), outLen: 256 },
    {
      id: 2,
      op: 'sign',
      ref: 'k2-b',
      mechanism: 0x000d,
      params: { type: 'pss', hashAlg: 0x250, mgf: 2, saltLen: 32 },
      data: randomBytes(32),
      outLen: 384,
    },
    {
      id: 3,
      op: 'decrypt',
      ref: 'k1-a',
      mechanism: 0x0009,
      params: { type: 'oaep', hashAlg: 0x220, mgf: 1 },
      data: randomBytes(256),
      outLen: 256,
    },
    {
      id: 4,
      op: 'encrypt',
      ref: 'k3-c',
      mechanism: 0x1087,
      params: { type: 'gcm', iv: new Uint8Array(0), tagBits: 128 },
      data: randomBytes(64),
      outLen: 80,
    },
    {
      id: 5,
      op: 'encrypt',
      ref: 'k3-c',
      mechanism: 0x1087,
      params: { type: 'gcm', iv: randomBytes(12), aad: Buffer.alloc(0), tagBits: 128 },
      data: Buffer.alloc(0),
      outLen: 16,
    },
    {
      id: 0xfffffffe,
      op: 'decrypt',
      ref: 'k3-c',
      mechanism: 0x1087,
      params: { type: 'gcm', iv: randomBytes(12), aad: randomBytes(300), tagBits: 96 },
      data: randomBytes(1000),
      outLen: 1028,
    },
  ];

  it('requests round-trip with each distinct ref sent once', () => {
    const refs: string[] = [];
    const ab = encodeRequests(reqs, refs);
    expect(refs).toEqual(['k1-a', 'k2-b', 'k3-c']);
    const back = decodeRequests(ab, refs);
    expect(back).toHaveLength(reqs.length);
    back.forEach((b, i) => {
      const r = reqs[i]!;
      expect(b.id).toBe(r.id);
      expect(b.op).toBe(r.op);
      expect(b.ref).toBe(r.ref);
      expect(b.mechanism).toBe(r.mechanism);
      expect(b.outLen).toBe(r.outLen);
      expect(Buffer.isBuffer(b.data)).toBe(true);
      expect(Buffer.from(b.data).equals(Buffer.from(r.data))).toBe(true);
      if (r.params.type === 'gcm' && b.params.type === 'gcm') {
        expect(Buffer.from(b.params.iv).equals(Buffer.from(r.params.iv))).toBe(true);
        expect(b.params.tagBits).toBe(r.params.tagBits);
        // No AAD and an empty AAD are different CK_GCM_PARAMS.
        if (r.params.aad === undefined) expect(b.params.aad).toBeUndefined();
        else expect(Buffer.from(b.params.aad!).equals(Buffer.from(r.params.aad))).toBe(true);
      } else expect(b.params).toEqual(r.params);
    });
  });

  it('results round-trip, including empty ones', () => {
    const results: Array<[number, Uint8Array]> = [
      [7, randomBytes(92)],
      [8, new Uint8Array(0)],
      [9, randomBytes(512)],
    ];
    const seen: Array<[number, Buffer]> = [];
    decodeResults(encodeResults(results), (id, bytes) => seen.push([id, Buffer.from(bytes)]));
    expect(seen.map(([id]) => id)).toEqual([7, 8, 9]);
    seen.forEach(([, b], i) => expect(b.equals(Buffer.from(results[i]![1]))).toBe(true));
  });

  it('only sign, encrypt and decrypt travel packed', () => {
    expect(reqs.every(isHot)).toBe(true);
    expect(isHot({ id: 1, op: 'random', ref: 'k', length: 12 })).toBe(false);
    expect(isHot({ id: 1, op: 'stats' })).toBe(false);
  });
});
