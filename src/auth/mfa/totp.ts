/**
 * TOTP (RFC 6238) over HOTP (RFC 4226) with node:crypto HMACs, base32 secrets (RFC 4648, no
 * padding, as authenticator apps read them) and the `otpauth://totp/` URL of Google
 * Authenticator's key-uri format, which Vault's TOTP MFA method hands out.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Hash algorithms Vault's TOTP method allows. */
export const TOTP_ALGORITHMS = { SHA1: 'sha1', SHA256: 'sha256', SHA512: 'sha512' } as const;
export type TotpAlgorithm = keyof typeof TOTP_ALGORITHMS;

/** The parameters of one TOTP secret. */
export interface TotpParams {
  period: number;
  digits: number;
  algorithm: TotpAlgorithm;
  /** Steps before and after now that are also accepted (0 or 1). */
  skew: number;
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding. */
export function base32Encode(b: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of b) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 4648 base32 (padding and case ignored); throws on other characters. */
export function base32Decode(s: string): Buffer {
  const clean = s.replace(/=+$/, '').toUpperCase();
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const v = B32.indexOf(ch);
    if (v < 0) throw new Error('base32: invalid character');
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new random secret of `size` bytes, base32. */
export function newTotpSecret(size: number): string {
  return base32Encode(randomBytes(size));
}

/** The HOTP value of `counter` (RFC 4226 section 5.3: dynamic truncation). */
export function hotp(secret: Buffer, counter: number, digits: number, algorithm: TotpAlgorithm): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(TOTP_ALGORITHMS[algorithm], secret).update(msg).digest();
  const off = mac[mac.length - 1]! & 0x0f;
  const bin = ((mac[off]! & 0x7f) << 24) | (mac[off + 1]! << 16) | (mac[off + 2]! << 8) | mac[off + 3]!;
  return String(bin % 10 ** digits).padStart(digits, '0');
}

/** The time step of `nowMs`. */
export function totpStep(nowMs: number, period: number): number {
  return Math.floor(nowMs / 1000 / period);
}

/** The code for `nowMs`. */
export function totpCode(secretB32: string, nowMs: number, p: TotpParams): string {
  return hotp(base32Decode(secretB32), totpStep(nowMs, p.period), p.digits, p.algorithm);
}

/** The step a code belongs to (now, or within the skew), or null; every candidate is compared in constant time. */
export function totpMatch(code: string, secretB32: string, nowMs: number, p: TotpParams): number | null {
  if (!/^\d+$/.test(code) || code.length !== p.digits) return null;
  const secret = base32Decode(secretB32);
  const now = totpStep(nowMs, p.period);
  let found: number | null = null;
  for (let d = -p.skew; d <= p.skew; d++) {
    const expected = hotp(secret, now + d, p.digits, p.algorithm);
    if (timingSafeEqual(Buffer.from(expected), Buffer.from(code)) && found === null) found = now + d;
  }
  return found;
}

/** The key URI authenticator apps scan (otpauth://totp/ISSUER:ACCOUNT?secret=...&issuer=...). */
export function otpauthUrl(issuer: string, account: string, secretB32: string, p: TotpParams): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const q = new URLSearchParams({
    algorithm: p.algorithm,
    digits: String(p.digits),
    issuer,
    period: String(p.period),
    secret: secretB32,
  });
  return `otpauth://totp/${label}?${q.toString()}`;
}
