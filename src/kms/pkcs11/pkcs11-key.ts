/**
 * A managed key on a PKCS#11 token. Signing, AES-GCM and RSA-OAEP decryption run in the token;
 * verification and RSA-OAEP encryption use the public key read from the token (as OpenBao's PKCS#11
 * KMS does, reference 3.5). At most `maxParallel` operations of one key are in flight (Vault's
 * max_parallel), each on its own session of the key's pool in the library's worker.
 */
import { createPublicKey, randomUUID, publicEncrypt, constants, type KeyObject } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import { CKM, CURVES, DIGEST_INFO, HASH_MECH, mechanismOf, rawToDer, type MechanismInfo } from '../mechanisms.js';
import { Semaphore } from '../semaphore.js';
import { verifyDigest } from '../verify.js';
import type { KmsCapabilities, KmsHash, KmsKey, KmsSignOptions } from '../../framework/kms-key.js';
import { INLINE_MAX_MICROS, InlineGcm } from './inline-gcm.js';
import { Pkcs11Library } from './pkcs11-library.js';
import type { GenerateSpec, KeyFacts, KeySpec, MechParams } from './worker-protocol.js';

/** How to find (or create) a key on a token. */
export interface Pkcs11KeyOptions {
  /** A loaded library, or the path of a PKCS#11 module (then the key owns a library of its own). */
  library: Pkcs11Library | string;
  /** Decimal slot id; give this or tokenLabel. */
  slot?: string;
  tokenLabel?: string;
  pin: string;
  keyLabel?: string;
  /** CKA_ID: `0x`-prefixed hex, or text taken as UTF-8 bytes. */
  keyId?: string;
  /** `0x0001`, `0x000D`, `0x0009`, `0x1041`, `0x1087`, or a CKM name. */
  mechanism: string | number;
  /** RSA modulus bits when generating (2048, 3072, 4096). */
  keyBits?: number;
  /** EC curve when generating: P256, P384, P521. */
  curve?: string;
  /** Generate the key when no key matches (CKA_SENSITIVE, not extractable, token object). */
  generate?: boolean;
  /** Generate even when a key matches, destroying the old objects (allow_replace_key). */
  replace?: boolean;
  forceRwSession?: boolean;
  /** Operations of this key in flight at once (default 1). */
  maxParallel?: number;
  /** OAEP hash for RSA-OAEP (default sha256; SoftHSM2 supports only sha1, reference 4.6). */
  rsaOaepHash?: KmsHash;
  /**
   * AES-GCM keys whose token answers a 64-byte encrypt within this many microseconds (measured by
   * the worker when the key opens) make their small calls on the calling thread (inline-gcm.ts);
   * 0 keeps every call in the worker. Default: KEYHOLD_PKCS11_INLINE_MAX_US, else 50.
   */
  inlineMaxMicros?: number;
}

/** The default limit of the same-thread path (KEYHOLD_PKCS11_INLINE_MAX_US overrides it; 0 turns it off). */
function defaultInlineMicros(): number {
  const v = process.env.KEYHOLD_PKCS11_INLINE_MAX_US;
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? n : INLINE_MAX_MICROS;
}

/** Attributes read back from the token (tests check generated keys cannot leave it). */
export interface Pkcs11KeyAttributes {
  token: boolean | null;
  private: boolean | null;
  sensitive: boolean | null;
  extractable: boolean | null;
  always_sensitive: boolean | null;
  never_extractable: boolean | null;
  /** Whether CKA_VALUE could be read (false for a key that stays inside). */
  value_readable: boolean;
  label: string;
  id: string;
}

/** Parse a key id: `0x..` hex bytes, otherwise the text's UTF-8 bytes. */
export function keyIdBytes(id: string): Buffer {
  if (/^0x([0-9a-f]{2})+$/i.test(id)) return Buffer.from(id.slice(2), 'hex');
  return Buffer.from(id, 'utf8');
}

function publicKeyOf(f: KeyFacts): KeyObject | null {
  if (f.kind === 'rsa' && f.modulus && f.publicExponent) {
    return createPublicKey({
      key: {
        kty: 'RSA',
        n: Buffer.from(f.modulus).toString('base64url'),
        e: Buffer.from(f.publicExponent).toString('base64url'),
      },
      format: 'jwk',
    });
  }
  if (f.kind === 'ec' && f.ecPoint && f.ecParams) {
    const c = CURVES.find((x) => x.oid.equals(Buffer.from(f.ecParams!)));
    const pt = Buffer.from(f.ecPoint);
    if (!c || pt[0] !== 4 || pt.length !== 1 + 2 * c.bytes) return null;
    return createPublicKey({
      key: {
        kty: 'EC',
        crv: c.jwk,
        x: pt.subarray(1, 1 + c.bytes).toString('base64url'),
        y: pt.subarray(1 + c.bytes).toString('base64url'),
      },
      format: 'jwk',
    });
  }
  return null;
}

/** A key on a PKCS#11 token. `wrap`/`unwrap` are encrypt/decrypt for the seal (AES-GCM or RSA-OAEP). */
export class Pkcs11Key implements KmsKey {
  readonly provider = 'pkcs11' as const;
  readonly kind: 'rsa' | 'ec' | 'aes';
  readonly capabilities: KmsCapabilities;
  private readonly pub: KeyObject | null;
  private readonly gate: Semaphore;
  /** The same-thread path of an AES-GCM key (null for other keys). */
  readonly inline: InlineGcm | null;

  constructor(
    private readonly lib: Pkcs11Library,
    private readonly ref: string,
    readonly mechanism: MechanismInfo,
    /** Facts read from the token (label, id, size, whether this open generated it). */
    readonly facts: KeyFacts,
    private readonly opts: { maxParallel: number; oaepHash: KmsHash; ownsLibrary: boolean; inlineMaxMicros: number },
  ) {
    this.kind = facts.kind;
    this.pub = publicKeyOf(facts);
    this.gate = new Semaphore(opts.maxParallel);
    this.inline =
      facts.kind === 'aes' && opts.inlineMaxMicros > 0 ? new InlineGcm(lib, ref, opts.inlineMaxMicros) : null;
    const asym = facts.kind !== 'aes';
    this.capabilities = {
      sign: asym,
      verify: asym,
      encrypt: facts.kind === 'aes' || (facts.kind === 'rsa' && mechanism.value === CKM.RSA_PKCS_OAEP),
      decrypt: facts.kind === 'aes' || (facts.kind === 'rsa' && mechanism.value === CKM.RSA_PKCS_OAEP),
    };
  }

  private run<T>(fn: () => Promise<T>): Promise<T> {
    return this.gate.run(fn);
  }

  private need(cap: keyof KmsCapabilities): void {
    if (!this.capabilities[cap])
      throw invalid(`managed key (${this.kind}, mechanism ${this.mechanism.name}) does not support ${cap}`);
  }

  publicKey(): KeyObject | null {
    return this.pub;
  }

  private modulusBytes(): number {
    return Math.ceil((this.facts.bits ?? 4096) / 8);
  }

  async sign(digest: Buffer, o: KmsSignOptions): Promise<Buffer> {
    this.need('sign');
    if (this.kind === 'ec') {
      if (o.hash === 'none') throw invalid('hash_algorithm', 'none is only valid for RSA PKCS#1 v1.5 signatures');
      const c = CURVES.find((x) => this.facts.ecParams && x.oid.equals(Buffer.from(this.facts.ecParams)));
      const raw = await this.run(() =>
        this.lib.call<Uint8Array>({
          op: 'sign',
          ref: this.ref,
          mechanism: CKM.ECDSA,
          params: { type: 'none' },
          data: digest,
          outLen: 2 * (c?.bytes ?? 66),
        }),
      );
      return rawToDer(Buffer.from(raw));
    }
    const padding = o.padding ?? (this.mechanism.value === CKM.RSA_PKCS_PSS ? 'pss' : 'pkcs1v15');
    if (padding === 'pss') {
      if (o.hash === 'none') throw invalid('hash_algorithm', 'none requires signature_algorithm pkcs1v15');
      const h = HASH_MECH[o.hash];
      const params: MechParams = { type: 'pss', hashAlg: h.mech, mgf: h.mgf, saltLen: o.saltLength ?? h.bytes };
      return Buffer.from(
        await this.run(() =>
          this.lib.call<Uint8Array>({
            op: 'sign',
            ref: this.ref,
            mechanism: CKM.RSA_PKCS_PSS,
            params,
            data: digest,
            outLen: this.modulusBytes(),
          }),
        ),
      );
    }
    // CKM_RSA_PKCS over DigestInfo || digest equals CKM_SHA*_RSA_PKCS (reference 4.2); `none` signs the bytes as given.
    const data = o.hash === 'none' ? digest : Buffer.concat([DIGEST_INFO[o.hash], digest]);
    return Buffer.from(
      await this.run(() =>
        this.lib.call<Uint8Array>({
          op: 'sign',
          ref: this.ref,
          mechanism: CKM.RSA_PKCS,
          params: { type: 'none' },
          data,
          outLen: this.modulusBytes(),
        }),
      ),
    );
  }

  async verify(digest: Buffer, signature: Buffer, o: KmsSignOptions): Promise<boolean> {
    this.need('verify');
    return verifyDigest(this.pub!, digest, signature, {
      ...o,
      padding: o.padding ?? (this.mechanism.value === CKM.RSA_PKCS_PSS ? 'pss' : 'pkcs1v15'),
    });
  }

  async encrypt(plaintext: Buffer, o: { aad?: Buffer; iv?: Buffer } = {}): Promise<Buffer> {
    this.need('encrypt');
    if (this.kind === 'rsa') {
      const h = this.opts.oaepHash;
      return publicEncrypt({ key: this.pub!, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: h }, plaintext);
    }
    if (o.iv && o.iv.length !== 12) throw invalid('nonce', `must be exactly 12 bytes, got ${o.iv.length}`);
    // No IV given: the token's C_GenerateRandom gives 12 bytes (the HSM never picks a GCM IV itself,
    // reference 4.2), prefixed to the ciphertext.
    const params = { type: 'gcm' as const, iv: o.iv ?? new Uint8Array(0), aad: o.aad, tagBits: 128 };
    // A fast token: on this thread, within max_parallel (nothing else runs during a synchronous call).
    const fast =
      this.inline && this.gate.free ? this.inline.run('encrypt', params, plaintext, plaintext.length + 16) : undefined;
    if (fast) return fast;
    const out = await this.run(() =>
      this.lib.call<Uint8Array>({
        op: 'encrypt',
        ref: this.ref,
        mechanism: CKM.AES_GCM,
        params,
        data: plaintext,
        outLen: plaintext.length + 16,
      }),
    );
    return asBuffer(out);
  }

  async decrypt(ciphertext: Buffer, o: { aad?: Buffer } = {}): Promise<Buffer> {
    this.need('decrypt');
    if (this.kind === 'rsa') {
      const h = HASH_MECH[this.opts.oaepHash];
      if (ciphertext.length !== this.modulusBytes())
        throw invalid('ciphertext', 'invalid ciphertext length for the key');
      try {
        return Buffer.from(
          await this.run(() =>
            this.lib.call<Uint8Array>({
              op: 'decrypt',
              ref: this.ref,
              mechanism: CKM.RSA_PKCS_OAEP,
              params: { type: 'oaep', hashAlg: h.mech, mgf: h.mgf },
              data: ciphertext,
              outLen: this.modulusBytes(),
            }),
          ),
        );
      } catch (e) {
        // A ciphertext that does not decrypt (SoftHSM2 answers CKR_GENERAL_ERROR whatever the cause)
        // is the caller's: one 400 with transit's OAEP message for every cause, as for keys held
        // in keyhold (no Manger oracle through rewrap; docs/security.md). A gone token was ruled
        // out by the worker before the error got here.
        if (/CKR_GENERAL_ERROR|CKR_ENCRYPTED_DATA_INVALID|CKR_ENCRYPTED_DATA_LEN_RANGE/.test((e as Error).message))
          throw invalid('failed to RSA decrypt the ciphertext: crypto/rsa: decryption error');
        throw e;
      }
    }
    if (ciphertext.length < 12 + 16) throw invalid('ciphertext', 'too short');
    const iv = ciphertext.subarray(0, 12);
    const params = { type: 'gcm' as const, iv, aad: o.aad, tagBits: 128 };
    // On this thread for a fast token; a failure (a bad tag too) is made again by the worker, which maps it.
    const fast =
      this.inline && this.gate.free
        ? this.inline.run('decrypt', params, ciphertext.subarray(12), ciphertext.length)
        : undefined;
    if (fast) return fast;
    try {
      return asBuffer(
        await this.run(() =>
          this.lib.call<Uint8Array>({
            op: 'decrypt',
            ref: this.ref,
            mechanism: CKM.AES_GCM,
            params,
            data: ciphertext.subarray(12),
            outLen: ciphertext.length,
          }),
        ),
      );
    } catch (e) {
      // SoftHSM reports a failed GCM tag check as CKR_GENERAL_ERROR (reference 4.4); the worker has
      // already ruled out a gone token before letting it through.
      if (/CKR_GENERAL_ERROR|CKR_ENCRYPTED_DATA_INVALID/.test((e as Error).message))
        throw invalid('cipher: message authentication failed');
      throw e;
    }
  }

  /** Encrypt for the seal (AES-GCM: `iv || ct || tag`; RSA-OAEP: ciphertext). */
  wrap(plaintext: Buffer, aad?: Buffer): Promise<Buffer> {
    return this.encrypt(plaintext, { aad });
  }

  /** Decrypt what `wrap` produced. */
  unwrap(blob: Buffer, aad?: Buffer): Promise<Buffer> {
    return this.decrypt(blob, { aad });
  }

  /** Attributes of the key object as the token reports them. */
  attributes(): Promise<Pkcs11KeyAttributes> {
    return this.lib.call<Pkcs11KeyAttributes>({ op: 'attributes', ref: this.ref });
  }

  async close(): Promise<void> {
    this.inline?.close();
    await this.lib.call({ op: 'close', ref: this.ref }).catch(() => undefined);
    if (this.opts.ownsLibrary) await this.lib.close();
  }
}

/** A worker result as a Buffer without copying it (ring results are fresh copies already). */
function asBuffer(u: Uint8Array): Buffer {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

let refCounter = 0;

/** Resolve options into a worker key spec and an optional generation spec. */
function specOf(o: Pkcs11KeyOptions, mech: MechanismInfo): { spec: KeySpec; generate?: GenerateSpec } {
  if (!o.slot && !o.tokenLabel) throw invalid('slot', 'slot or token_label is required');
  if (!o.keyLabel && !o.keyId) throw invalid('key_label', 'key_label or key_id is required');
  const spec: KeySpec = {
    slot: o.slot,
    tokenLabel: o.slot ? undefined : o.tokenLabel,
    pin: o.pin,
    keyLabel: o.keyLabel,
    keyId: o.keyId ? keyIdBytes(o.keyId) : undefined,
    forceRw: o.forceRwSession ?? false,
  };
  if (!o.generate && !o.replace) return { spec };
  let generate: GenerateSpec;
  if (mech.kind === 'aes') generate = { kind: 'aes', bits: 256 };
  else if (mech.kind === 'rsa') {
    const bits = o.keyBits ?? 0;
    if (![2048, 3072, 4096].includes(bits))
      throw invalid('key_bits', 'must be 2048, 3072 or 4096 to generate an RSA key');
    generate = { kind: 'rsa', bits };
  } else {
    const c = CURVES.find((x) => x.name === (o.curve ?? '').toUpperCase().replace('-', ''));
    if (!c) throw invalid('curve', 'must be P256, P384 or P521 to generate an EC key');
    generate = { kind: 'ec', ecParams: c.oid };
  }
  generate.replace = o.replace ?? false;
  return { spec, generate };
}

/**
 * Open (and, when allowed and missing, generate) a key on a PKCS#11 token. Throws 400 for a bad
 * configuration (wrong PIN, missing key, mechanism not fitting the key) and 503 when the library or
 * token is unavailable.
 */
export async function openPkcs11Key(o: Pkcs11KeyOptions): Promise<Pkcs11Key> {
  const mech = mechanismOf(o.mechanism);
  if (!mech)
    throw invalid(
      'mechanism',
      `unsupported mechanism ${String(o.mechanism)}; supported: 0x0001, 0x000D, 0x0009, 0x1041, 0x1087`,
    );
  const { spec, generate } = specOf(o, mech);
  const ownsLibrary = typeof o.library === 'string';
  const lib = typeof o.library === 'string' ? new Pkcs11Library('pkcs11', o.library) : o.library;
  const ref = `k${++refCounter}-${randomUUID()}`;
  try {
    const facts = await lib.call<KeyFacts>({ op: 'open', ref, spec, generate });
    if (facts.kind !== mech.kind)
      throw invalid(
        'mechanism',
        `${mech.name} needs an ${mech.kind.toUpperCase()} key; the token's key "${facts.label}" is ${facts.kind.toUpperCase()}`,
      );
    const key = new Pkcs11Key(lib, ref, mech, facts, {
      maxParallel: Math.max(1, o.maxParallel ?? 1),
      oaepHash: o.rsaOaepHash ?? 'sha256',
      ownsLibrary,
      inlineMaxMicros: Math.max(0, o.inlineMaxMicros ?? defaultInlineMicros()),
    });
    // AES-GCM: the worker times the token now, so a fast one answers on this thread from the first call.
    await key.inline?.learn();
    return key;
  } catch (e) {
    await lib.call({ op: 'close', ref }).catch(() => undefined);
    if (ownsLibrary) await lib.close();
    throw e;
  }
}
