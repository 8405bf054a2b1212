/**
 * Seal state. The master key (32 random bytes) encrypts the barrier keyring record; the keyring
 * holds the barrier key that encrypts every other record. The master key itself is kept in the OS
 * keychain and shown once to the operator as the recovery key (base64), which `operator unseal` takes.
 * Storage layout (outside the barrier, since it must be readable while sealed):
 *   core/seal-config  JSON {version, storage_id, keychain_account|null, initialized_time}
 *   core/keyring      AES-256-GCM(master key, AAD "core/keyring") of JSON {barrier_key}
 */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import type { Backend } from '../storage/backend.js';

/** Stored seal configuration (not secret). */
export interface SealConfig {
  version: 1;
  storage_id: string;
  keychain_account: string | null;
  initialized_time: string;
}

const CONFIG = 'core/seal-config';
const KEYRING = 'core/keyring';

function wrap(master: Buffer, plaintext: Buffer): Buffer {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', master, nonce);
  c.setAAD(Buffer.from(KEYRING));
  const body = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([Buffer.from([1]), nonce, body, c.getAuthTag()]);
}

function unwrap(master: Buffer, rec: Buffer): Buffer {
  if (rec.length < 29 || rec[0] !== 1) throw new Error('keyring record is malformed');
  const d = createDecipheriv('aes-256-gcm', master, rec.subarray(1, 13));
  d.setAAD(Buffer.from(KEYRING));
  d.setAuthTag(rec.subarray(rec.length - 16));
  return Buffer.concat([d.update(rec.subarray(13, rec.length - 16)), d.final()]);
}

/** Read the seal configuration, or null when storage was never initialised. */
export async function readSealConfig(backend: Backend): Promise<SealConfig | null> {
  const b = await backend.get(CONFIG);
  return b ? (JSON.parse(b.toString('utf8')) as SealConfig) : null;
}

/** Create master key, barrier key and seal config in empty storage. */
export async function initializeStorage(backend: Backend, keychainAccount: string | null): Promise<{ master: Buffer; barrierKey: Buffer; config: SealConfig }> {
  if (await readSealConfig(backend)) throw new Error('already initialized');
  const master = randomBytes(32);
  const barrierKey = randomBytes(32);
  const config: SealConfig = {
    version: 1,
    storage_id: randomUUID(),
    keychain_account: keychainAccount,
    initialized_time: new Date().toISOString(),
  };
  await backend.put(KEYRING, wrap(master, Buffer.from(JSON.stringify({ barrier_key: barrierKey.toString('base64') }))));
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
    throw new Error('invalid key: the recovery key does not open this storage');
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
