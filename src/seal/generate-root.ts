/**
 * Root token regeneration (Vault's sys/generate-root: vault/generate_root.go, http/sys_generate_root.go,
 * sdk/helper/roottoken). An operator starts an attempt, holders of unseal keys (recovery keys under an
 * auto seal) give their shares, and once the threshold rebuilds the key a new root token is made and
 * handed back encoded, never in the clear:
 * - OTP (Vault >= 1.10): the token XORed with a one-time pad of the token's length (28 characters,
 *   base62), base64 without padding (`encoded_token`); `operator generate-root -decode -otp` undoes it.
 *   Without an otp in the request the server makes one and returns it once, in the init answer.
 * - PGP: the token encrypted to `pgp_key` (base64 of a binary public key), base64.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { invalid } from '../framework/errors.js';
import { pgpEncrypt, pgpFingerprint } from './pgp.js';
import { KeyParts, checkKeyLength, combineShares, decodeKeyText } from './shamir.js';

/** Length of a root token and so of its OTP: "hvs." + 24 base62 characters (Vault's TokenLength + prefix). */
export const OTP_LENGTH = 28;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Vault's GenerateRootStatusResponse. */
export interface GenerateRootStatus {
  nonce: string;
  started: boolean;
  progress: number;
  required: number;
  complete: boolean;
  encoded_token: string;
  encoded_root_token: string;
  pgp_fingerprint: string;
  otp: string;
  otp_length: number;
}

/** What a root generation needs from the daemon. */
export interface RootGenerationDeps {
  /** Shares needed (the unseal threshold, or the recovery threshold under an auto seal). */
  required(): number;
  /** Throws invalid when the combined key is not the unseal (or recovery) key. */
  verifyKey(combined: Buffer): Promise<void>;
}

/** A fresh base62 one-time pad of `length` characters. */
export function generateOtp(length = OTP_LENGTH): string {
  let s = '';
  for (let i = 0; i < length; i++) s += BASE62[randomInt(62)];
  return s;
}

/** XOR of two equal-length byte strings. */
function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** Encode a token with an OTP of its length (Vault >= 1.10): base64 (standard alphabet, no padding) of token XOR otp. */
export function encodeToken(token: string, otp: string): string {
  const t = Buffer.from(token, 'utf8');
  const o = Buffer.from(otp, 'utf8');
  if (t.length !== o.length) throw invalid('otp', `must be ${t.length} characters long, got ${o.length}`);
  return xor(t, o).toString('base64').replace(/=+$/, '');
}

/** Decode what `encodeToken` made (`operator generate-root -decode`). */
export function decodeToken(encoded: string, otp: string): string {
  const e = Buffer.from(encoded.trim(), 'base64');
  const o = Buffer.from(otp.trim(), 'utf8');
  if (e.length !== o.length)
    throw invalid(
      'otp',
      `the encoded token is ${e.length} bytes long but the OTP is ${o.length}; use the OTP the attempt was started with`,
    );
  return xor(e, o).toString('utf8');
}

interface Attempt {
  nonce: string;
  otp: string | null;
  pgpKey: string | null;
  pgpFingerprint: string;
  parts: KeyParts;
}

/** The root generation of one daemon: at most one attempt at a time, held in memory only. */
export class RootGeneration {
  private attempt: Attempt | null = null;
  constructor(private readonly deps: RootGenerationDeps) {}

  /** GET sys/generate-root/attempt. */
  status(): GenerateRootStatus {
    const a = this.attempt;
    return {
      nonce: a?.nonce ?? '',
      started: a !== null,
      progress: a?.parts.progress ?? 0,
      required: this.deps.required(),
      complete: false,
      encoded_token: '',
      encoded_root_token: '',
      pgp_fingerprint: a?.pgpFingerprint ?? '',
      otp: '',
      otp_length: OTP_LENGTH,
    };
  }

  /** PUT sys/generate-root/attempt: start an attempt with an OTP (given or made here) or a PGP key. */
  async init(opts: { otp?: string; pgp_key?: string }): Promise<GenerateRootStatus> {
    const otpGiven = opts.otp !== undefined && opts.otp !== '';
    const pgpGiven = opts.pgp_key !== undefined && opts.pgp_key !== '';
    if (otpGiven && pgpGiven) throw invalid('only one of "otp" and "pgp_key" may be given');
    if (this.attempt) throw invalid('root generation already in progress');
    let otp: string | null = null;
    let fingerprint = '';
    let made = '';
    if (pgpGiven) fingerprint = await pgpFingerprint(opts.pgp_key!, 'pgp_key');
    else if (otpGiven) {
      if (opts.otp!.length !== OTP_LENGTH)
        throw invalid('otp', `must be ${OTP_LENGTH} characters long (base62), got ${opts.otp!.length}`);
      otp = opts.otp!;
    } else {
      otp = generateOtp();
      made = otp;
    }
    // Checked again here: another init may have started while the PGP key was read.
    if (this.attempt) throw invalid('root generation already in progress');
    this.attempt = {
      nonce: randomUUID(),
      otp,
      pgpKey: pgpGiven ? opts.pgp_key! : null,
      pgpFingerprint: fingerprint,
      parts: new KeyParts(''),
    };
    return { ...this.status(), otp: made };
  }

  /** DELETE sys/generate-root/attempt. */
  cancel(): void {
    this.attempt?.parts.wipe();
    this.attempt = null;
  }

  /** PUT sys/generate-root/update: one key share; once the threshold is met, `issueRoot` makes the token, returned encoded. */
  async update(keyText: string, nonce: string, issueRoot: () => Promise<string>): Promise<GenerateRootStatus> {
    const key = decodeKeyText(keyText);
    try {
      checkKeyLength(key);
      const a = this.attempt;
      if (!a) throw invalid('no root generation in progress');
      if (nonce !== a.nonce)
        throw invalid(`incorrect nonce supplied; nonce for this root generation operation is "${a.nonce}"`);
      if (!a.parts.add(key)) throw invalid('given key has already been provided during this generation operation');
      const need = this.deps.required();
      if (a.parts.progress < need) return this.status();
      let combined: Buffer;
      try {
        combined = await combineShares(a.parts.parts, need);
      } catch (e) {
        a.parts.wipe();
        throw invalid(`failed to compute root key: ${(e as Error).message}`);
      }
      try {
        // A failed verification ends the attempt's progress (Vault resets the collected shares).
        a.parts.wipe();
        await this.deps.verifyKey(combined);
      } finally {
        combined.fill(0);
      }
      this.attempt = null;
      const token = await issueRoot();
      let encoded: string;
      if (a.pgpKey)
        encoded = (await pgpEncrypt(a.pgpKey, Buffer.from(token, 'utf8'), 'pgp_key')).ciphertext.toString('base64');
      else encoded = encodeToken(token, a.otp!);
      return {
        nonce: a.nonce,
        started: true,
        progress: need,
        required: need,
        complete: true,
        encoded_token: encoded,
        encoded_root_token: encoded,
        pgp_fingerprint: a.pgpFingerprint,
        otp: '',
        otp_length: OTP_LENGTH,
      };
    } finally {
      key.fill(0);
    }
  }
}
