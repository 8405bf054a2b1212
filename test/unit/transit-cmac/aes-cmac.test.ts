/**
 * AES-CMAC checked against the NIST SP 800-38B example vectors (appendix D.1-D.3, also in
 * test/vectors/cmac-sp800-38b.json) and against a second implementation, OpenSSL's `openssl mac CMAC`,
 * on random keys and messages of every length class (empty, partial block, whole blocks).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { aesCmac, cmacSubkeys } from '../../../src/engines/transit/ops/aes-cmac.js';

interface Vector {
  key: string;
  k1: string;
  k2: string;
  cases: { msg: string; mac: string }[];
}
const vectors = JSON.parse(readFileSync(new URL('../../vectors/cmac-sp800-38b.json', import.meta.url), 'utf8')) as {
  vectors: Record<string, Vector>;
};

function opensslCmac(key: Buffer, msg: Buffer): Buffer | null {
  const cipher = `AES-${key.length * 8}-CBC`;
  try {
    const out = execFileSync(
      'openssl',
      ['mac', '-cipher', cipher, '-macopt', `hexkey:${key.toString('hex')}`, 'CMAC'],
      { input: msg, encoding: 'utf8' },
    );
    return Buffer.from(out.trim(), 'hex');
  } catch {
    return null;
  }
}
const hasOpenssl = opensslCmac(Buffer.alloc(16), Buffer.alloc(0)) !== null;

describe('AES-CMAC, NIST SP 800-38B examples', () => {
  for (const [name, v] of Object.entries(vectors.vectors)) {
    it(`${name}: subkeys K1, K2`, () => {
      const { k1, k2 } = cmacSubkeys(Buffer.from(v.key, 'hex'));
      expect(k1.toString('hex')).toBe(v.k1);
      expect(k2.toString('hex')).toBe(v.k2);
    });
    for (const c of v.cases) {
      it(`${name}: Mlen ${c.msg.length * 4} bits`, () => {
        expect(aesCmac(Buffer.from(v.key, 'hex'), Buffer.from(c.msg, 'hex')).toString('hex')).toBe(c.mac);
      });
    }
  }

  it('truncation keeps the leftmost bytes (SP 800-38B 6.2 step 7)', () => {
    const v = vectors.vectors['AES-128']!;
    const c = v.cases[1]!;
    for (const len of [1, 4, 8, 12, 15])
      expect(aesCmac(Buffer.from(v.key, 'hex'), Buffer.from(c.msg, 'hex'), len).toString('hex')).toBe(
        c.mac.slice(0, len * 2),
      );
  });

  it('refuses bad key sizes and MAC lengths', () => {
    expect(() => aesCmac(Buffer.alloc(20), Buffer.alloc(1))).toThrow(/16, 24 or 32/);
    expect(() => aesCmac(Buffer.alloc(16), Buffer.alloc(1), 17)).toThrow(/1-16/);
    expect(() => aesCmac(Buffer.alloc(16), Buffer.alloc(1), 0)).toThrow(/1-16/);
  });
});

describe.skipIf(!hasOpenssl)('AES-CMAC agrees with openssl mac CMAC', () => {
  for (const keyLen of [16, 24, 32]) {
    it(`AES-${keyLen * 8}: lengths 0..49 and 1000`, () => {
      const key = randomBytes(keyLen);
      for (const n of [...Array.from({ length: 50 }, (_, i) => i), 1000]) {
        const msg = randomBytes(n);
        expect(aesCmac(key, msg).toString('hex'), `length ${n}`).toBe(opensslCmac(key, msg)!.toString('hex'));
      }
    });
  }
});
