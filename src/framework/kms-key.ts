/** The one interface every external key provider (pkcs11, awskms) implements (design note section 6). */
import type { KeyObject } from 'node:crypto';

/** Hash names as transit spells them internally. */
export type KmsHash =
  | 'sha1'
  | 'sha224'
  | 'sha256'
  | 'sha384'
  | 'sha512'
  | 'sha3-224'
  | 'sha3-256'
  | 'sha3-384'
  | 'sha3-512';

/** What a key can do, as data (from its provider, key type and mechanism). */
export interface KmsCapabilities {
  sign: boolean;
  verify: boolean;
  encrypt: boolean;
  decrypt: boolean;
}

/** Signing options: the caller hashes; `hash: 'none'` signs the given bytes as they are (RSA PKCS#1 v1.5 only). */
export interface KmsSignOptions {
  hash: KmsHash | 'none';
  /** RSA padding; defaults to what the key's mechanism implies. */
  padding?: 'pkcs1v15' | 'pss';
  /** PSS salt length in bytes; default: the hash length. */
  saltLength?: number;
  /** The unhashed message, when known (AWS KMS then hashes it itself, MessageType RAW). */
  message?: Buffer;
}

/** A key held by an HSM or a cloud KMS; its private or secret part never reaches keyhold. */
export interface KmsKey {
  readonly provider: 'pkcs11' | 'awskms';
  readonly kind: 'rsa' | 'ec' | 'aes';
  readonly capabilities: KmsCapabilities;
  /** Sign a digest (ECDSA signatures come back ASN.1 DER). */
  sign(digest: Buffer, opts: KmsSignOptions): Promise<Buffer>;
  /** Verify a signature over a digest (DER for ECDSA). */
  verify(digest: Buffer, signature: Buffer, opts: KmsSignOptions): Promise<boolean>;
  /** AES-GCM: `iv(12) || ct || tag(16)` with a fresh IV from the HSM unless `iv` is given; RSA-OAEP: the ciphertext. */
  encrypt(plaintext: Buffer, opts?: { aad?: Buffer; iv?: Buffer }): Promise<Buffer>;
  /** Inverse of encrypt. */
  decrypt(ciphertext: Buffer, opts?: { aad?: Buffer }): Promise<Buffer>;
  /** The public key (RSA/EC), or null for symmetric keys. */
  publicKey(): KeyObject | null;
  /** Release sessions. */
  close(): Promise<void>;
}
