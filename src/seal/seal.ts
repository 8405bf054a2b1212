/**
 * Seal state. The master key (32 random bytes) encrypts the barrier keyring record; the keyring
 * holds the barrier key that encrypts every other record.
 * - Shamir seal (type "shamir", Vault's default): the master key is split into `secret_shares`
 *   unseal keys of which `secret_threshold` rebuild it (one share: the key itself); the OS keychain
 *   may also hold it so the daemon unseals itself at start (the shares are then the recovery path).
 * - Auto seals ("transit", "pkcs11"): an external key wraps the master key (stored at
 *   core/hsm/barrier-unseal-keys, Vault's path); init returns recovery keys instead, whose key is kept
 *   wrapped by the same seal at core/recovery-key to check them (Vault's design [vault src vault/seal_autoseal.go]).
 * Storage layout (outside the barrier, since it must be readable while sealed):
 *   core/seal-config           JSON SealConfig (not secret)
 *   core/keyring               AES-256-GCM(master key, AAD "core/keyring") of JSON {barrier_key}
 *   core/keyring-previous      the keyring under the previous master key while a rekey or seal
 *                              migration is being written (a crash in between leaves both openable)
 *   core/hsm/barrier-unseal-keys, core/recovery-key   JSON SealBlob (auto seals only)
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import type { Backend } from '../storage/backend.js';

/** Stored seal configuration (not secret). Fields after `initialized_time` are absent in stores made before shares existed (read as shamir 1/1). */
export interface SealConfig {
  version: 1;
  storage_id: string;
  keychain_account: string | null;
  initialized_time: string;
  /** Barrier seal type: "shamir" (default), "transit", "pkcs11". */
  type?: string;
  secret_shares?: number;
  secret_threshold?: number;
  /** Recovery key split of an auto seal. */
  recovery?: { secret_shares: number; secret_threshold: number } | null;
}

/** A key wrapped by an auto seal, as stored (Vault keeps a protobuf BlobInfo here; keyhold JSON). */
export interface SealBlob {
  seal_type: string;
  key_id: string;
  /** The seal's ciphertext: transit's `vault:vN:...` string, or base64 for binary ciphertext. */
  ciphertext: string;
}

const CONFIG = 'core/seal-config';
const KEYRING = 'core/keyring';
const KEYRING_PREVIOUS = 'core/keyring-previous';
/** Where an auto seal keeps the wrapped master key (Vault's path). */
export const BARRIER_KEYS_PATH = 'core/hsm/barrier-unseal-keys';
/** Where an auto seal keeps the wrapped recovery key (Vault's path). */
export const RECOVERY_KEY_PATH = 'core/recovery-key';

/** Barrier seal type of a stored config. */
export function sealTypeOf(c: SealConfig): string {
  return c.type ?? 'shamir';
}

/** Shares/threshold of the barrier (unseal) key. */
export function barrierShares(c: SealConfig): { secret_shares: number; secret_threshold: number } {
  return { secret_shares: c.secret_shares ?? 1, secret_threshold: c.secret_threshold ?? 1 };
}

function wrap(master: Buffer, plaintext: Buffer): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', master, nonce);
  c.setAAD(Buffer.from(KEYRING));
  const body = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([Buffer.from([1]), nonce, body, c.getAuthTag()]);
}

function unwrap(master: Buffer, rec: Buffer): Buffer {
  if (master.length !== 32) throw new Error('master key must be 32 bytes');
  if (rec.length < 29 || rec[0] !== 1) throw new Error('keyring record is malformed');
  const d = createDecipheriv('aes-256-gcm', master, rec.subarray(1, 13));
  d.setAAD(Buffer.from(KEYRING));
  d.setAuthTag(rec.subarray(rec.length - 16));
  return Buffer.concat([d.update(rec.subarray(13, rec.length - 16)), d.final()]);
}

/** Write the seal configuration. */
export async function writeSealConfig(backend: Backend, config: SealConfig): Promise<void> {
  await backend.put(CONFIG, Buffer.from(JSON.stringify(config)));
}

/** Read a wrapped key blob, or null. */
export async function readBlob(backend: Backend, path: string): Promise<SealBlob | null> {
  const b = await backend.get(path);
  return b ? (JSON.parse(b.toString('utf8')) as SealBlob) : null;
}

/** Store a wrapped key blob. */
export async function writeBlob(backend: Backend, path: string, blob: SealBlob): Promise<void> {
  await backend.put(path, Buffer.from(JSON.stringify(blob)));
}

/**
 * Re-encrypt the keyring under `newMaster` (rekey, seal migration). The record under the old key is
 * kept at core/keyring-previous until `forgetPreviousKeyring`, so a crash between this write and the
 * seal-config write leaves storage openable with either key.
 */
export async function rewrapKeyring(backend: Backend, barrierKey: Buffer, newMaster: Buffer): Promise<void> {
  const current = await backend.get(KEYRING);
  if (current) await backend.put(KEYRING_PREVIOUS, current);
  await backend.put(
    KEYRING,
    wrap(newMaster, Buffer.from(JSON.stringify({ barrier_key: barrierKey.toString('base64') }))),
  );
}

/** Drop the previous keyring once the new seal configuration is written. */
export async function forgetPreviousKeyring(backend: Backend): Promise<void> {
  await backend.delete(KEYRING_PREVIOUS);
}

/** Read the seal configuration, or null when storage was never initialised. */
export async function readSealConfig(backend: Backend): Promise<SealConfig | null> {
  const b = await backend.get(CONFIG);
  return b ? (JSON.parse(b.toString('utf8')) as SealConfig) : null;
}

/** Create master key, barrier key and seal config in empty storage. */
export async function initializeStorage(
  backend: Backend,
  keychainAccount: string | null,
  opts: { extra?: Partial<SealConfig>; beforeConfig?: (master: Buffer) => Promise<void> } = {},
): Promise<{ master: Buffer; barrierKey: Buffer; config: SealConfig }> {
  if (await readSealConfig(backend)) throw new Error('already initialized');
  const master = randomBytes(32);
  const barrierKey = randomBytes(32);
  const config: SealConfig = {
    version: 1,
    storage_id: randomUUID(),
    keychain_account: keychainAccount,
    initialized_time: new Date().toISOString(),
    ...opts.extra,
  };
  await backend.put(KEYRING, wrap(master, Buffer.from(JSON.stringify({ barrier_key: barrierKey.toString('base64') }))));
  // Auto seals store the wrapped keys first: the seal config is the "initialized" mark, written last.
  await opts.beforeConfig?.(master);
  await backend.put(CONFIG, Buffer.from(JSON.stringify(config)));
  return { master, barrierKey, config };
}

/** Recover the barrier key with the master key; throws on a wrong key. */
export async function openKeyring(backend: Backend, master: Buffer): Promise<Buffer> {
  const rec = await backend.get(KEYRING);
  if (!rec) throw new Error('storage is not initialized');
  let json: Buffer;
  try {
    json = unwrap(master, rec);
  } catch {
    // A rekey or migration interrupted before its seal config was written: the old key still opens.
    const prev = master.length === 32 ? await backend.get(KEYRING_PREVIOUS) : null;
    try {
      if (!prev) throw new Error('no previous keyring');
      json = unwrap(master, prev);
    } catch {
      throw new Error('invalid key: the recovery key does not open this storage');
    }
  }
  return Buffer.from((JSON.parse(json.toString('utf8')) as { barrier_key: string }).barrier_key, 'base64');
}

/** Recovery key text for a master key. */
export function recoveryKeyOf(master: Buffer): string {
  return master.toString('base64');
}

/** Parse a recovery key; throws on wrong size. */
export function masterFromRecoveryKey(text: string): Buffer {
  const b = Buffer.from(text.trim(), 'base64');
  if (b.length !== 32) throw new Error('recovery key must decode to 32 bytes');
  return b;
}
