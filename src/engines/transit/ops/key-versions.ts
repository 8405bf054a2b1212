/**
 * Key-version selection per operation (reference transit-wire.md section 4.9), with Vault's exact
 * error strings. All functions throw 400 (`invalid`) with the message Vault gives.
 */
import { invalid } from '../../../framework/errors.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';

/** The version an encryption (encrypt, rewrap's encrypt side, datakey) uses: 0 = latest. */
export function encryptionVersion(key: TransitKey, requested: number): number {
  if (requested === 0) return key.latestVersion;
  if (requested < 0) throw invalid('requested version for encryption is negative');
  if (requested > key.latestVersion)
    throw invalid('requested version for encryption is higher than the latest key version');
  if (requested < key.minEncryptionVersion)
    throw invalid('requested version for encryption is less than the minimum encryption key version');
  return requested;
}

/** The version a signature uses: 0 = latest; the minimum only applies when set. */
export function signingVersion(key: TransitKey, requested: number): number {
  if (requested === 0) return key.latestVersion;
  if (requested < 0) throw invalid('requested version for signing is negative');
  if (requested > key.latestVersion)
    throw invalid('requested version for signing is higher than the latest key version');
  if (key.minEncryptionVersion > 0 && requested < key.minEncryptionVersion) {
    throw invalid('requested version for signing is less than the minimum encryption key version');
  }
  return requested;
}

/** The version an HMAC is generated with: 0 = latest; below a set minimum encryption version is refused. */
export function hmacVersion(key: TransitKey, requested: number): number {
  if (requested === 0 || requested === key.latestVersion) return key.latestVersion;
  if (key.minEncryptionVersion > 0 && requested < key.minEncryptionVersion) {
    throw invalid('cannot generate HMAC: version is too old (disallowed by policy)');
  }
  if (requested < 0) throw invalid('key version does not exist (cannot be negative)');
  if (requested > key.latestVersion)
    throw invalid(`key version does not exist; latest key version is ${key.latestVersion}`);
  return requested;
}

/** A live version (>= min_decryption_version and loaded), or Vault's `no such key version`. */
export function liveVersion(key: TransitKey, version: number): KeyVersion {
  const v = version >= key.minDecryptionVersion ? key.versions.get(version) : undefined;
  if (!v) throw invalid('no such key version');
  return v;
}
