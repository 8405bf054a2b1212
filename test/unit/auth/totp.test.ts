/**
 * TOTP: RFC 6238 Appendix B test vectors (8 digits, SHA1/SHA256/SHA512 with the RFC's seeds),
 * RFC 4648 base32 vectors, the skew window, and the otpauth URL.
 */
import { describe, expect, it } from 'vitest';
import { base32Decode, base32Encode, otpauthUrl, totpCode, totpMatch } from '../../../src/auth/mfa/totp.js';
import { glob } from '../../../src/engines/cert/cert-match.js';

// RFC 6238 Appendix B: the seeds are the ASCII "1234567890" repeated to 20, 32 and 64 bytes.
const seed = (n: number) => base32Encode(Buffer.from('1234567890'.repeat(7).slice(0, n)));
const VECTORS: Array<[number, string, string, string]> = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('computes the Appendix B codes for SHA1, SHA256 and SHA512', () => {
    for (const [t, sha1, sha256, sha512] of VECTORS) {
      expect(totpCode(seed(20), t * 1000, { period: 30, digits: 8, algorithm: 'SHA1', skew: 0 }), `SHA1 at ${t}`).toBe(
        sha1,
      );
      expect(
        totpCode(seed(32), t * 1000, { period: 30, digits: 8, algorithm: 'SHA256', skew: 0 }),
        `SHA256 at ${t}`,
      ).toBe(sha256);
      expect(
        totpCode(seed(64), t * 1000, { period: 30, digits: 8, algorithm: 'SHA512', skew: 0 }),
        `SHA512 at ${t}`,
      ).toBe(sha512);
    }
  });

  it('accepts the previous and next period only with skew 1, and names the step matched', () => {
    const p = { period: 30, digits: 8, algorithm: 'SHA1' as const, skew: 1 };
    const code = totpCode(seed(20), 1111111109 * 1000, p);
    expect(totpMatch(code, seed(20), (1111111109 + 30) * 1000, p)).toBe(Math.floor(1111111109 / 30));
    expect(totpMatch(code, seed(20), (1111111109 + 30) * 1000, { ...p, skew: 0 })).toBeNull();
    expect(totpMatch(code, seed(20), (1111111109 + 90) * 1000, p)).toBeNull();
    expect(totpMatch('1234567', seed(20), 0, p)).toBeNull();
    expect(totpMatch('abcdefgh', seed(20), 0, p)).toBeNull();
  });

  it('writes an otpauth URL authenticator apps read', () => {
    const u = new URL(
      otpauthUrl('keyhold', 'entity_1a2b', 'JBSWY3DPEHPK3PXP', { period: 30, digits: 6, algorithm: 'SHA1', skew: 1 }),
    );
    expect(u.protocol).toBe('otpauth:');
    expect(u.host).toBe('totp');
    expect(decodeURIComponent(u.pathname)).toBe('/keyhold:entity_1a2b');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      algorithm: 'SHA1',
      digits: '6',
      issuer: 'keyhold',
      period: '30',
      secret: 'JBSWY3DPEHPK3PXP',
    });
  });
});

describe('base32 (RFC 4648 section 10, without padding)', () => {
  it('encodes and decodes the RFC vectors', () => {
    const cases: Array<[string, string]> = [
      ['', ''],
      ['f', 'MY'],
      ['fo', 'MZXQ'],
      ['foo', 'MZXW6'],
      ['foob', 'MZXW6YQ'],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI'],
    ];
    for (const [plain, enc] of cases) {
      expect(base32Encode(Buffer.from(plain))).toBe(enc);
      expect(base32Decode(enc).toString()).toBe(plain);
    }
    expect(base32Decode('mzxw6ytboi======').toString()).toBe('foobar');
    expect(() => base32Decode('MZ1')).toThrow();
  });
});

describe('cert constraint globs (go-glob semantics)', () => {
  it('matches * anywhere, anchors both ends otherwise', () => {
    expect(glob('*', 'anything')).toBe(true);
    expect(glob('*.example.com', 'a.example.com')).toBe(true);
    expect(glob('*.example.com', 'example.com')).toBe(false);
    expect(glob('a*c*e', 'abcde')).toBe(true);
    expect(glob('a*c*e', 'abcdef')).toBe(false);
    expect(glob('ab*ba', 'aba')).toBe(false);
    expect(glob('exact', 'exact')).toBe(true);
    expect(glob('exact', 'exactly')).toBe(false);
  });
});
