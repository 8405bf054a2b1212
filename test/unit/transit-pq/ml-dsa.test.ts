/**
 * keyhold's own FIPS 204 implementation (src/engines/transit/pq/ml-dsa.ts), kept as an independent
 * cross-check of @noble/post-quantum (transit signs with noble, or node:crypto where it has ML-DSA): sizes
 * of table 2, sign/verify round trips for every parameter set (pure with a context, HashML-DSA,
 * deterministic signing repeatable), and rejection of tampered messages, signatures and contexts.
 * NIST's ACVP known answers for all three implementations are in acvp.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mlDsaKeygen, mlDsaSign, mlDsaSizes, mlDsaVerify } from '../../../src/engines/transit/pq/ml-dsa.js';

const SIZES = { 44: [1312, 2560, 2420], 65: [1952, 4032, 3309], 87: [2592, 4896, 4627] } as const;

describe('ML-DSA (FIPS 204)', () => {
  for (const level of [44, 65, 87] as const) {
    it(`ML-DSA-${level}: sizes, round trip, tamper, context, HashML-DSA`, () => {
      const { publicKey, secretKey } = mlDsaKeygen(level, randomBytes(32));
      const [pk, sk, sig] = SIZES[level];
      expect(mlDsaSizes(level)).toEqual({ publicKey: pk, secretKey: sk, signature: sig });
      expect([publicKey.length, secretKey.length]).toEqual([pk, sk]);
      expect(secretKey.subarray(0, 32)).toEqual(publicKey.subarray(0, 32));
      const msg = Buffer.from('transit message');
      const s = mlDsaSign(level, secretKey, msg);
      expect(s.length).toBe(sig);
      expect(mlDsaVerify(level, publicKey, msg, s)).toBe(true);
      expect(mlDsaVerify(level, publicKey, Buffer.from('transit messagf'), s)).toBe(false);
      const bad = Buffer.from(s);
      bad[100]! ^= 1;
      expect(mlDsaVerify(level, publicKey, msg, bad)).toBe(false);
      const ctx = Buffer.from('ctx');
      const sc = mlDsaSign(level, secretKey, msg, { context: ctx });
      expect(mlDsaVerify(level, publicKey, msg, sc, { context: ctx })).toBe(true);
      expect(mlDsaVerify(level, publicKey, msg, sc)).toBe(false);
      const sh = mlDsaSign(level, secretKey, msg, { preHash: { hash: 'sha2-256' } });
      expect(mlDsaVerify(level, publicKey, msg, sh, { preHash: { hash: 'sha2-256' } })).toBe(true);
      expect(mlDsaVerify(level, publicKey, msg, sh)).toBe(false);
    });
  }

  it('key generation is a function of the seed; deterministic signing repeats, hedged does not', () => {
    const seed = randomBytes(32);
    const a = mlDsaKeygen(44, seed);
    expect(mlDsaKeygen(44, seed).publicKey).toEqual(a.publicKey);
    const m = Buffer.from('x');
    expect(mlDsaSign(44, a.secretKey, m, { deterministic: true })).toEqual(
      mlDsaSign(44, a.secretKey, m, { deterministic: true }),
    );
    expect(mlDsaSign(44, a.secretKey, m)).not.toEqual(mlDsaSign(44, a.secretKey, m));
    expect(() => mlDsaKeygen(44, randomBytes(31))).toThrow(/32 bytes/);
  });
});
