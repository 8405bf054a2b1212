/** Auto seals: an external key (transit of another server, an HSM key) that wraps the master key. */
import type { SealBlob } from './seal.js';

/** One configured auto seal (Vault's `seal "TYPE" { ... }` stanza, built into something that wraps). */
export interface SealWrapper {
  /** Seal type as seal-status reports it: "transit", "pkcs11". */
  readonly type: string;
  /** Connectivity check before first use (transit: encrypt of "a", as Vault's wrapper does). */
  init?(): Promise<void>;
  /** Wrap a key. Errors name the external service, never the key. */
  encrypt(plaintext: Buffer): Promise<SealBlob>;
  /** Unwrap a stored key. */
  decrypt(blob: SealBlob): Promise<Buffer>;
  /** Stop background work (token renewal), close sessions. */
  close?(): Promise<void>;
}

/** The seals a server is configured with: the one in use, and (for a migration) the old one marked `disabled`. */
export interface ConfiguredSeals {
  /** The active auto seal, or null for Shamir (with the OS keychain when enabled). */
  active: SealWrapper | null;
  /** The seal being migrated away from (`disabled = "true"`), if any. */
  disabled: SealWrapper | null;
}
