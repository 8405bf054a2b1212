/**
 * The in-memory model of a transit key (a "policy" in Vault's words). Shared contract between the
 * key-management code (issue 3) and the data operations (issue 4). Storage serialisation lives in
 * the store; backup/export formats follow reference transit-wire.md section 5.
 */
import type { KeyObject } from 'node:crypto';
import type { KmsKey } from '../../../framework/kms-key.js';

/** Key type names as on the wire. */
export type KeyTypeName =
  | 'aes128-gcm96'
  | 'aes256-gcm96'
  | 'chacha20-poly1305'
  | 'xchacha20-poly1305'
  | 'ed25519'
  | 'ecdsa-p256'
  | 'ecdsa-p384'
  | 'ecdsa-p521'
  | 'rsa-2048'
  | 'rsa-3072'
  | 'rsa-4096'
  | 'hmac'
  | 'managed_key'
  | 'aes128-cmac'
  | 'aes192-cmac'
  | 'aes256-cmac'
  | 'ml-dsa'
  | 'slh-dsa'
  | 'hybrid';

/** The classical half of a `hybrid` key (Vault's `hybrid_key_type_ec`). */
export type HybridEcType = 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521' | 'ed25519';

/** One version of a key. */
export interface KeyVersion {
  version: number;
  /** Symmetric key (AES, ChaCha, XChaCha, hmac type) or, for ed25519, the 64-byte Go private key (seed || public). */
  key?: Buffer;
  /** This version's independent HMAC key (32 random bytes; equals `key` for the hmac type). */
  hmacKey: Buffer;
  /** Asymmetric private key; absent for public-key-only imports and symmetric keys. */
  privateKey?: KeyObject;
  /** Asymmetric public key. */
  publicKey?: KeyObject;
  /** Creation time, Unix seconds (fractional allowed). */
  creationTime: number;
  /** Convergent-encryption version this version was created with (Vault's per-entry convergent_version). */
  convergentVersion?: number;
  /** PEM certificate chain set with set-certificate (leaf first). */
  certificateChain?: string[];
  /** managed_key type: the UUID of the managed key behind this version (Vault's `managed_key_id`). */
  managedKeyId?: string;
}

/** A named key with its configuration and versions. */
export interface TransitKey {
  name: string;
  type: KeyTypeName;
  derived: boolean;
  /** 0 = HKDF-SHA256 ("hkdf_sha256"), 1 = legacy counter KDF ("hmac-sha256-counter"); see reference 4.3. */
  kdf: 0 | 1;
  convergentEncryption: boolean;
  /** Policy-level convergent version (1, 2 or 3); 0 when not convergent. */
  convergentVersion: number;
  exportable: boolean;
  allowPlaintextBackup: boolean;
  deletionAllowed: boolean;
  minDecryptionVersion: number;
  minEncryptionVersion: number;
  minAvailableVersion: number;
  latestVersion: number;
  /** Seconds; 0 = off. */
  autoRotatePeriod: number;
  importedKey: boolean;
  allowImportedKeyRotation: boolean;
  /** Refuse sha1 for sign/verify (keyhold extension; documented in docs/transit.md). */
  disallowSha1?: boolean;
  /** Soft-deleted (OpenBao): every operation but read, backup, soft-delete-restore and delete is refused. */
  softDeleted?: boolean;
  /** `jwks/:name` answers without a token (keyhold extension, issue 17). */
  publicJwks?: boolean;
  /** Size in bytes for hmac keys. */
  keySize?: number;
  /** ml-dsa / hybrid: "44", "65" or "87"; slh-dsa: e.g. "slh-dsa-sha2-128s" (Vault's `parameter_set`). */
  parameterSet?: string;
  /** hybrid: the classical key type (Vault's `hybrid_key_type_ec`; the PQC half is always ML-DSA). */
  hybridEc?: HybridEcType;
  /** Set when a backup was taken (Vault `backup_info`; time as RFC 3339). */
  backupInfo?: { time: string; version: number };
  /** Set on restored keys (Vault `restore_info`). */
  restoreInfo?: { time: string; version: number };
  /** Versions currently loaded (minAvailableVersion..latestVersion). */
  versions: Map<number, KeyVersion>;
}

/** Options for creating a key (keys/:name create and encrypt upsert). */
export interface CreateKeyOptions {
  type: KeyTypeName;
  derived?: boolean;
  convergentEncryption?: boolean;
  exportable?: boolean;
  allowPlaintextBackup?: boolean;
  keySize?: number;
  autoRotatePeriod?: number;
  /** managed_key type: UUID of the managed key of version 1 (resolved and permission-checked by the route). */
  managedKeyId?: string;
  /** ml-dsa, slh-dsa, hybrid: the parameter set (validated by pq/pq-params.ts). */
  parameterSet?: string;
  /** hybrid: the classical key type. */
  hybridEc?: HybridEcType;
}

/**
 * The key store a transit mount offers its routes (implemented in issue 3's store; used by the data
 * operations of issue 4). Keys are cached (LRU when configured) and guarded by per-key locks.
 */
export interface KeyStore {
  /** The key, or null when absent. */
  get(name: string): Promise<TransitKey | null>;
  /** The key if it is cached (no storage read), else undefined. */
  cached(name: string): TransitKey | undefined;
  /** Create the key if absent; `created` tells whether this call created it. */
  create(name: string, opts: CreateKeyOptions): Promise<{ key: TransitKey; created: boolean }>;
  /** Run `fn` holding the key's lock (shared: concurrent readers; exclusive: rotate/config/trim). */
  withLock<T>(name: string, mode: 'shared' | 'exclusive', fn: () => Promise<T>): Promise<T>;
}

/** A mount's view of sys/managed-keys: resolution and use are checked against the mount's permission. */
export interface ManagedKeyAccess {
  /** The UUID of a managed key named or id'd by the request (400 when missing or not allowed here). */
  resolve(ref: { name?: string; id?: string }): Promise<string>;
  /** The live key behind a UUID for one usage (400 when not allowed; 503 when the HSM/KMS is unavailable). */
  key(uuid: string, usage?: 'sign' | 'verify' | 'encrypt' | 'decrypt'): Promise<KmsKey>;
  /** The managed key's name, or "" when it no longer exists. */
  nameOf(uuid: string): Promise<string>;
  /** Record / forget that transit key `name` uses the managed key (delete of the managed key is refused meanwhile). */
  markUsed(uuid: string, name: string): Promise<void>;
  unmarkUsed(uuid: string, name: string): Promise<void>;
}

/** What data-operation routes need from a transit mount's live state. */
export interface TransitState {
  keys: KeyStore;
  /** Managed keys as this mount may use them (absent when the core offers none). */
  managed?: ManagedKeyAccess;
  /** `config/keys` disable_upsert. */
  upsertDisabled(): Promise<boolean>;
}
