/**
 * Shamir's secret sharing of the master key (and of the recovery key of auto seals), with the
 * audited `shamir-secret-sharing` package (Privy; audited by Cure53 and Zellic; zero dependencies).
 * Its share layout is Vault's: the y bytes of each polynomial followed by one byte holding the x
 * coordinate, so a share of a 32-byte key is 33 bytes [vault src shamir/shamir.go].
 * Vault's special case is kept: with one share the key itself is the share (no split) [vault src vault/init.go].
 */
import { timingSafeEqual } from 'node:crypto';
import { combine, split } from 'shamir-secret-sharing';
import { invalid } from '../framework/errors.js';

/** Barrier key length bounds Vault checks unseal keys against (AES block size .. 2x, plus the x byte). */
export const KEY_MIN = 16;
/** Longest accepted key: 32 bytes plus the share's x-coordinate byte. */
export const KEY_MAX = 33;

/** Shares and threshold of a split key (stored in the seal configuration). */
export interface ShareConfig {
  secret_shares: number;
  secret_threshold: number;
}

/** Vault's SealConfig.Validate rules, message for message [vault src vault/seal_config.go]. */
export function shareConfigError(c: ShareConfig): string | null {
  if (!(c.secret_shares >= 1)) return 'shares must be at least one';
  if (!(c.secret_threshold >= 1)) return 'threshold must be at least one';
  if (c.secret_shares > 1 && c.secret_threshold === 1) return 'threshold must be greater than one for multiple shares';
  if (c.secret_shares > 255) return 'shares must be less than 256';
  if (c.secret_threshold > 255) return 'threshold must be less than 256';
  if (c.secret_threshold > c.secret_shares) return 'threshold cannot be larger than shares';
  return null;
}

/** Split `key` into `shares` parts of which `threshold` rebuild it (1 share: the key itself). */
export async function splitKey(key: Buffer, shares: number, threshold: number): Promise<Buffer[]> {
  if (shares === 1) return [Buffer.from(key)];
  // The library checks `constructor === Uint8Array`, which a Buffer fails: hand it a plain copy.
  const parts = await split(new Uint8Array(key), shares, threshold);
  return parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength));
}

/** Rebuild a key from `threshold` parts (threshold 1: the part is the key). Throws on malformed parts. */
export async function combineShares(parts: Buffer[], threshold: number): Promise<Buffer> {
  if (threshold === 1) return Buffer.from(parts[0]!);
  const out = await combine(parts.map((p) => new Uint8Array(p)));
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * Decode an unseal or recovery key as Vault's HTTP layer does: hex when it decodes to a plausible
 * key length, otherwise standard base64 [vault src http/sys_seal.go].
 */
export function decodeKeyText(text: string): Buffer {
  const t = text.trim();
  if (/^(?:[0-9a-fA-F]{2})+$/.test(t)) {
    const hex = Buffer.from(t, 'hex');
    if (hex.length >= KEY_MIN && hex.length <= KEY_MAX) return hex;
  }
  if (t === '' || !/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 !== 0)
    throw invalid("'key' must be a valid hex or base64 string");
  return Buffer.from(t, 'base64');
}

/** Vault's length check of a key part [vault src vault/core.go unsealFragment]. */
export function checkKeyLength(key: Buffer): void {
  if (key.length < KEY_MIN) throw invalid(`key is shorter than minimum ${KEY_MIN} bytes`);
  if (key.length > KEY_MAX) throw invalid(`key is longer than maximum ${KEY_MAX} bytes`);
}

/** Constant-time equality of two keys of possibly different length. */
export function sameKey(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Parts collected towards a threshold (unseal, rekey, verification), with Vault's nonce. */
export class KeyParts {
  readonly parts: Buffer[] = [];
  constructor(readonly nonce: string) {}
  /** Add a part; false when the same part was already given. */
  add(key: Buffer): boolean {
    if (this.parts.some((p) => sameKey(p, key))) return false;
    this.parts.push(Buffer.from(key));
    return true;
  }
  get progress(): number {
    return this.parts.length;
  }
  /** Best-effort wipe of the collected parts. */
  wipe(): void {
    for (const p of this.parts) p.fill(0);
    this.parts.length = 0;
  }
}
