/**
 * External key providers (design note section 6): keys whose private or secret part stays in a
 * PKCS#11 token or in AWS KMS. Transit's `managed_key` type and the HSM seal both use this module.
 *
 * Exported surface (stable; the seal builds on it):
 *
 *   openPkcs11Key(opts): Promise<Pkcs11Key>
 *     opts = { library: Pkcs11Library | '/path/to/module.so', slot?: '<decimal>' | tokenLabel?: 'T',
 *              pin, keyLabel?, keyId?: '0x..' | 'text', mechanism: '0x1087' | '0x0009' | '0x0001' |
 *              '0x000D' | '0x1041' | 'CKM_AES_GCM' ..., generate?: boolean, replace?: boolean,
 *              keyBits?: 2048|3072|4096 (RSA generation), curve?: 'P256'|'P384'|'P521' (EC generation),
 *              maxParallel?: number (default 1), forceRwSession?: boolean, rsaOaepHash?: 'sha1'|'sha256'...,
 *              inlineMaxMicros?: number (AES-GCM same-thread limit, default 50; 0 = always the worker) }
 *     Finds the key by label and/or id (generating it when `generate` and missing: token object,
 *     CKA_SENSITIVE=true, CKA_EXTRACTABLE=false, CKA_PRIVATE=true). Errors are KeyholdErrors:
 *     400 (`invalid`) for a wrong PIN, a missing key, a mechanism that does not fit the key;
 *     503 (`unavailable`) when the library cannot be loaded or the token is not present.
 *   Pkcs11Key (implements KmsKey)
 *     wrap(plaintext, aad?) / unwrap(blob, aad?): AES-GCM -> `iv(12) || ct || tag(16)` (IV from the
 *       token's RNG), RSA-OAEP -> the OAEP ciphertext (hash `rsaOaepHash`, default sha256; SoftHSM2
 *       only does sha1).
 *     sign / verify / encrypt / decrypt / publicKey() / attributes() / close()
 *     facts: { kind: 'rsa'|'ec'|'aes', bits?, label, id, generated }
 *   Pkcs11Library(name, path, logger?): a handle on a PKCS#11 module; every handle of the same module
 *     path in the process shares one worker thread (one C_Initialize, one login per token; a key
 *     naming the token with another PIN is refused). `name` appears in errors. `stats()` -> logins,
 *     sessions, re-initializations. `close()` (the worker stops with the last handle). Passing a path
 *     string as `library` to openPkcs11Key makes a handle the key closes with itself.
 *   openAwsKmsKey(opts): Promise<AwsKmsKey> (awskms provider, sign/verify; encrypt/decrypt for
 *     SYMMETRIC_DEFAULT keys).
 *   KmsKey, KmsCapabilities, KmsSignOptions, KmsHash: the provider interface.
 *   mechanismOf, MECHANISMS, CURVES: the PKCS#11 facts tables.
 *
 * Native calls run in the library's worker thread, except the small AES-GCM calls of a token the
 * worker measured as fast (pkcs11/inline-gcm.ts: microseconds, cheaper than the thread hop); a token that
 * disappears (SoftHSM2 token directory moved away) and comes back is picked up again without a
 * restart (the worker re-initializes the module and reopens the key on the next call).
 */
export type { KmsCapabilities, KmsHash, KmsKey, KmsSignOptions } from '../framework/kms-key.js';
export { CURVES, MECHANISMS, mechanismOf, type MechanismInfo } from './mechanisms.js';
export { Pkcs11Library } from './pkcs11/pkcs11-library.js';
export {
  Pkcs11Key,
  openPkcs11Key,
  keyIdBytes,
  type Pkcs11KeyOptions,
  type Pkcs11KeyAttributes,
} from './pkcs11/pkcs11-key.js';
export { verifyDigest } from './verify.js';
export { AwsKmsKey, openAwsKmsKey, type AwsKmsKeyOptions } from './awskms/awskms-key.js';
export {
  ManagedKeyRegistry,
  MANAGED_KEY_TYPES,
  USAGES,
  allowedOn,
  type KmsLibraryConfig,
  type ManagedKeyRecord,
  type ManagedKeyType,
  type Usage,
} from './managed-keys.js';
