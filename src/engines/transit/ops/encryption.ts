/**
 * Encrypt and decrypt with a transit key version, byte-compatible with Vault (reference
 * transit-wire.md sections 4.2-4.4): AEAD payload `nonce || ct || tag` (convergent v1: no nonce),
 * derived keys via the key's KDF, convergent nonces v1/v2/v3, RSA-OAEP (SHA-256, empty label) or
 * PKCS#1 v1.5 for RSA keys. No HTTP here: errors are thrown by kind with Vault's messages.
 */
import { hashAlgorithm } from './hash-algorithms.js';
import { constants, createHmac, publicEncrypt, privateDecrypt, type KeyObject } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from '../keyring/key-types.js';
import { MISSING_CONTEXT, deriveBytes } from '../keyring/derive.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';
import { NoncePool } from '../../../crypto/nonce-pool.js';
import { AEAD_SUITES, aeadOpen, aeadSeal, isAeadSuite, type AeadSuite } from './aead.js';
import { encryptionVersion, liveVersion } from './key-versions.js';
import { decodeStdBase64, parseVersioned, versionPrefix } from './version-prefix.js';
import { modulusBits, rsaPkcs1DecryptImplicit } from './rsa-padding.js';

/** Random AEAD nonces for this process (see NoncePool). */
const nonces = new NoncePool();

/** RSA encryption paddings (`padding_scheme`). */
export const RSA_PADDINGS = ['oaep', 'pkcs1v15'] as const;
/** One of RSA_PADDINGS. */
export type RsaPadding = (typeof RSA_PADDINGS)[number];

/** Options of one encryption. */
export interface EncryptOptions {
  /** 0 = latest. */
  keyVersion?: number;
  context?: Buffer;
  nonce?: Buffer;
  associatedData?: Buffer;
  padding?: string;
  /** RSA-OAEP hash (Vault's `hash_algorithm` names; default sha2-256). */
  oaepHash?: string;
}

/** Options of one decryption. */
export interface DecryptOptions {
  context?: Buffer;
  nonce?: Buffer;
  associatedData?: Buffer;
  padding?: string;
  /** RSA-OAEP hash (Vault's `hash_algorithm` names; default sha2-256). */
  oaepHash?: string;
  /**
   * PKCS#1 v1.5 only: answer the implicit-rejection message instead of an error when the padding
   * is invalid. Set where the caller never sees the plaintext (rewrap), so no answer depends on the
   * padding's validity (docs/security.md, "RSA PKCS#1 v1.5 and implicit rejection").
   */
  implicitRejection?: boolean;
}

/** Vault's answer for every RSA decryption failure, whatever its cause (one message: no Manger/Bleichenbacher hints). */
const RSA_DECRYPT_FAILED = 'failed to RSA decrypt the ciphertext: crypto/rsa: decryption error';

/** The convergent scheme version that applies to key version `v` (0 when not convergent). */
export function convergentVersionOf(key: TransitKey, v: number): number {
  if (!key.convergentEncryption) return 0;
  const perVersion = key.versions.get(v)?.convergentVersion ?? 0;
  if (perVersion) return perVersion;
  return key.convergentVersion > 0 ? key.convergentVersion : 1;
}

/** Refuse `padding_scheme` values other than oaep/pkcs1v15, and any on non-RSA keys. */
export function checkPadding(key: TransitKey, padding: string | undefined): RsaPadding {
  if (padding === undefined || padding === '') return 'oaep';
  if (!KEY_TYPES[key.type].rsaBits)
    throw invalid(`padding_scheme argument invalid: padding schemes apply to RSA keys only, not ${key.type}`);
  if (!(RSA_PADDINGS as readonly string[]).includes(padding))
    throw invalid(`padding_scheme argument invalid: unsupported padding scheme "${padding}"; use oaep or pkcs1v15`);
  return padding as RsaPadding;
}

/**
 * The RSA-OAEP hash (for OAEP and MGF1) named by `hash_algorithm`: sha1, sha2-224/256/384/512,
 * sha3-224/256/384/512; default sha2-256. Other key types ignore the field, as Vault does.
 */
export function oaepHashOf(name: string | undefined): { node: string; size: number } {
  if (name === undefined || name === '') return { node: 'sha256', size: 32 };
  const alg = hashAlgorithm(name);
  if (!alg || !alg.node)
    throw invalid(
      'hash_algorithm',
      `unsupported hash algorithm ${JSON.stringify(name.slice(0, 32))} for RSA-OAEP (sha1, sha2-224, sha2-256, sha2-384, sha2-512, sha3-224, sha3-256, sha3-384, sha3-512)`,
    );
  return { node: alg.node, size: alg.size };
}

function symmetricKey(key: TransitKey, v: KeyVersion, context: Buffer | undefined, length: number): Buffer {
  if (!v.key) throw invalid('no such key version');
  if (!key.derived) return v.key;
  if (!context || context.length === 0) throw invalid(MISSING_CONTEXT);
  return deriveBytes(key.kdf, v.key, context, length);
}

function rsaPublic(v: KeyVersion): KeyObject {
  const k = v.publicKey ?? v.privateKey;
  if (!k) throw invalid('no such key version');
  return k;
}

/**
 * Rewrap from PKCS#1 v1.5 must encrypt with PKCS#1 v1.5 too (the default there when
 * encrypt_padding_scheme is not given; an explicit `oaep` is refused): OAEP carries fewer bytes (k-66 against
 * k-11), so a re-encryption could fail by length, and whether it fails would depend on the real or
 * synthetic message, i.e. on the padding's validity. Refused up front, from the request alone.
 */
export function checkRewrapPaddings(
  key: TransitKey,
  decryptPadding: string | undefined,
  encryptPadding: string | undefined,
): void {
  const bits = KEY_TYPES[key.type].rsaBits;
  if (!bits || decryptPadding !== 'pkcs1v15' || encryptPadding === 'pkcs1v15') return;
  const k = Math.ceil(bits / 8);
  throw invalid(
    `encrypt_padding_scheme: must be pkcs1v15 when decrypt_padding_scheme is pkcs1v15 (OAEP carries at most ${k - 66} bytes, PKCS#1 v1.5 up to ${k - 11}; a failure by length would reveal whether the padding was valid)`,
  );
}

/** Check nonce rules for encryption with version `ver`: only convergent v1 takes a caller nonce, of exactly the suite's size. */
export function checkNonce(key: TransitKey, ver: number, nonce: Buffer | undefined): void {
  const cv = convergentVersionOf(key, ver);
  if (cv === 1) {
    const size = isAeadSuite(key.type) ? AEAD_SUITES[key.type].nonceBytes : 12;
    if (!nonce || nonce.length !== size)
      throw invalid(`base64-decoded nonce must be ${size} bytes long when using convergent encryption with this key`);
    return;
  }
  if (nonce && nonce.length) throw invalid('provided nonce not allowed for this key');
}

/** Encrypt `plaintext`; returns the `vault:vN:` ciphertext and the version used. */
export function encryptWithKey(
  key: TransitKey,
  plaintext: Buffer,
  opts: EncryptOptions = {},
): { ciphertext: string; version: number } {
  const info = KEY_TYPES[key.type];
  if (!info.encrypt || info.kind === 'managed')
    throw invalid(`message encryption not supported for key type ${key.type}`);
  const ver = encryptionVersion(key, opts.keyVersion ?? 0);
  const v = liveVersion(key, ver);
  checkNonce(key, ver, opts.nonce);
  let payload: Buffer;
  if (isAeadSuite(key.type)) {
    if (opts.padding) checkPadding(key, opts.padding);
    payload = aeadEncrypt(key, key.type, ver, v, plaintext, opts);
  } else {
    if (opts.associatedData && opts.associatedData.length)
      throw invalid(`associated_data provided for non-AEAD cipher suite ${key.type}`);
    const padding = checkPadding(key, opts.padding);
    payload = rsaEncrypt(rsaPublic(v), padding, plaintext, oaepHashOf(opts.oaepHash));
  }
  return { ciphertext: versionPrefix(ver) + payload.toString('base64'), version: ver };
}

function aeadEncrypt(
  key: TransitKey,
  suite: AeadSuite,
  ver: number,
  v: KeyVersion,
  plaintext: Buffer,
  opts: EncryptOptions,
): Buffer {
  const s = AEAD_SUITES[suite];
  const cv = convergentVersionOf(key, ver);
  const derived = symmetricKey(key, v, opts.context, s.keyBytes + (cv >= 3 ? 32 : 0));
  const encKey = derived.subarray(0, s.keyBytes);
  let nonce: Buffer;
  if (cv === 1) nonce = opts.nonce!;
  else if (cv === 2)
    nonce = createHmac('sha256', opts.context ?? Buffer.alloc(0))
      .update(plaintext)
      .digest()
      .subarray(0, s.nonceBytes);
  else if (cv >= 3)
    nonce = createHmac('sha256', derived.subarray(s.keyBytes, s.keyBytes + 32))
      .update(plaintext)
      .digest()
      .subarray(0, s.nonceBytes);
  else nonce = nonces.take(s.nonceBytes);
  return aeadSeal(suite, encKey, nonce, plaintext, opts.associatedData, cv !== 1);
}

function rsaEncrypt(
  pub: KeyObject,
  padding: RsaPadding,
  plaintext: Buffer,
  hash: { node: string; size: number },
): Buffer {
  const k = Math.ceil(modulusBits(pub) / 8);
  const max = padding === 'oaep' ? k - 2 * hash.size - 2 : k - 11;
  if (plaintext.length > max)
    throw invalid(
      `failed to RSA encrypt the plaintext: message too long for RSA key size (at most ${max} bytes with ${padding})`,
    );
  return padding === 'oaep'
    ? publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash.node }, plaintext)
    : publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, plaintext);
}

/** Decrypt a `vault:vN:` ciphertext; returns the plaintext bytes and the version it was made with. */
export function decryptWithKey(
  key: TransitKey,
  ciphertext: string,
  opts: DecryptOptions = {},
): { plaintext: Buffer; version: number } {
  const info = KEY_TYPES[key.type];
  if (!info.decrypt || info.kind === 'managed')
    throw invalid(`message decryption not supported for key type ${key.type}`);
  const { version, payload } = parseVersioned(ciphertext, 'ciphertext', key);
  const cv = convergentVersionOf(key, version);
  if (cv === 1 && (!opts.nonce || opts.nonce.length === 0)) throw invalid('invalid convergent nonce supplied');
  if (cv !== 1 && opts.nonce && opts.nonce.length) throw invalid('provided nonce not allowed for this key');
  const raw = decodeStdBase64(payload);
  if (!raw) throw invalid('invalid ciphertext: could not decode base64');
  const v = liveVersion(key, version);
  if (isAeadSuite(key.type)) {
    if (opts.padding) checkPadding(key, opts.padding);
    const s = AEAD_SUITES[key.type];
    const encKey = symmetricKey(key, v, opts.context, s.keyBytes).subarray(0, s.keyBytes);
    if (cv === 1) return { plaintext: aeadOpen(key.type, encKey, opts.nonce!, raw, opts.associatedData), version };
    if (raw.length < s.nonceBytes) throw invalid('invalid ciphertext length');
    const pt = aeadOpen(
      key.type,
      encKey,
      raw.subarray(0, s.nonceBytes),
      raw.subarray(s.nonceBytes),
      opts.associatedData,
    );
    return { plaintext: pt, version };
  }
  if (opts.associatedData && opts.associatedData.length)
    throw invalid(`associated_data provided for non-AEAD cipher suite ${key.type}`);
  const padding = checkPadding(key, opts.padding);
  const oaepHash = oaepHashOf(opts.oaepHash).node;
  if (!v.privateKey)
    throw invalid(`failed to RSA decrypt the ciphertext: key version ${version} holds only a public key`);
  let pt: Buffer | null;
  if (padding === 'oaep') {
    // OpenSSL's OAEP decoding (RSA_padding_check_PKCS1_OAEP_mgf1) is constant time and fails with one
    // error whatever the cause; the message node:crypto throws is dropped, every failure is RSA_DECRYPT_FAILED.
    try {
      pt = privateDecrypt({ key: v.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, raw);
    } catch {
      pt = null;
    }
  } else {
    const r = rsaPkcs1DecryptImplicit(v.privateKey, raw);
    // Decrypt keeps Vault's error (its caller may read plaintext anyway); rewrap takes the message as is.
    pt = r && (r.valid || opts.implicitRejection) ? r.message : null;
  }
  if (!pt) throw invalid(RSA_DECRYPT_FAILED);
  return { plaintext: pt, version };
}
