/**
 * `seal "pkcs11"`: the master key is wrapped by a key inside an HSM, through the PKCS#11 provider of
 * src/kms (the same provider transit's managed keys use; every native call runs in its worker
 * thread). Vault Enterprise's stanza and VAULT_HSM_* variables (reference managed-keys-wire.md 3.1):
 * lib, slot | token_label, pin, key_label, key_id, mechanism (0x1087 CKM_AES_GCM or 0x0009
 * CKM_RSA_PKCS_OAEP), generate_key, force_rw_session, max_parallel, rsa_oaep_hash.
 * AES-GCM output is `iv(12) || ct || tag(16)` with the IV from the token's RNG, as go-kms-wrapping's
 * pkcs11 wrapper lays it out; the stored blob keeps it base64 with the key label as key id.
 */
import type { Logger } from '../framework/context.js';
import { pick, pickBool } from './seal-config.js';
import { openPkcs11Key, type KmsKey } from '../kms/index.js';
import type { SealBlob } from './seal.js';
import type { SealWrapper } from './wrapper.js';

/** Resolved pkcs11 seal settings. */
export interface Pkcs11SealSettings {
  lib: string;
  slot?: string;
  tokenLabel?: string;
  pin: string;
  keyLabel: string;
  keyId?: string;
  mechanism: string;
  generateKey: boolean;
  forceRwSession: boolean;
  maxParallel: number;
  rsaOaepHash: 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512';
}

/** Associated data bound to every AES-GCM wrap (a ciphertext of another use of the key will not open). */
const AAD = Buffer.from('keyhold seal v1');

const MECHS: Record<string, string> = {
  '0x1087': '0x1087',
  '4231': '0x1087',
  ckm_aes_gcm: '0x1087',
  aes_gcm: '0x1087',
  '0x0009': '0x0009',
  '0x9': '0x0009',
  '9': '0x0009',
  ckm_rsa_pkcs_oaep: '0x0009',
  rsa_pkcs_oaep: '0x0009',
};

/** Vault's VAULT_HSM_* variables win over the stanza, as for the other seals (docs/seal.md). */
export function pkcs11Settings(p: Record<string, unknown>, env: NodeJS.ProcessEnv): Pkcs11SealSettings {
  const lib = pick(env.VAULT_HSM_LIB, p.lib);
  const slot = pick(env.VAULT_HSM_SLOT, p.slot);
  const tokenLabel = pick(env.VAULT_HSM_TOKEN_LABEL, p.token_label);
  const pin = pick(env.VAULT_HSM_PIN, p.pin);
  const keyLabel = pick(env.VAULT_HSM_KEY_LABEL, p.key_label);
  const keyId = pick(env.VAULT_HSM_KEY_ID, p.key_id);
  if (!lib) throw new Error('lib is required (or VAULT_HSM_LIB)');
  if (!slot && !tokenLabel) throw new Error('slot or token_label is required');
  if (slot && !/^\d+$/.test(slot)) throw new Error(`slot must be a decimal number, got "${slot}"`);
  if (!pin) throw new Error('pin is required (or VAULT_HSM_PIN)');
  if (!keyLabel && !keyId) throw new Error('key_label is required');
  const rawMech = pick(env.VAULT_HSM_MECHANISM, p.mechanism) || '0x1087';
  const mechanism = MECHS[rawMech.toLowerCase()];
  if (!mechanism)
    throw new Error(
      `mechanism "${rawMech}" is not supported by keyhold's pkcs11 seal (use 0x1087 CKM_AES_GCM or 0x0009 CKM_RSA_PKCS_OAEP; CBC with HMAC is not offered)`,
    );
  const mp = pick(env.VAULT_HSM_MAX_PARALLEL, p.max_parallel) || '1';
  if (!/^\d+$/.test(mp) || Number(mp) < 1) throw new Error(`max_parallel must be a positive integer, got "${mp}"`);
  const hash = (pick(env.VAULT_HSM_RSA_OAEP_HASH, p.rsa_oaep_hash) || 'sha256').toLowerCase();
  if (!['sha1', 'sha224', 'sha256', 'sha384', 'sha512'].includes(hash))
    throw new Error(`rsa_oaep_hash must be sha1, sha224, sha256, sha384 or sha512, got "${hash}"`);
  return {
    lib,
    slot: slot || undefined,
    tokenLabel: tokenLabel || undefined,
    pin,
    keyLabel,
    keyId: keyId || undefined,
    mechanism,
    generateKey: pickBool('generate_key', env.VAULT_HSM_GENERATE_KEY, p.generate_key),
    forceRwSession: pickBool('force_rw_session', env.VAULT_HSM_FORCE_RW_SESSION, p.force_rw_session),
    maxParallel: Number(mp),
    rsaOaepHash: hash as Pkcs11SealSettings['rsaOaepHash'],
  };
}

/** An HSM seal. The key is opened on first use (so a daemon starts, sealed, while the token is absent). */
export class Pkcs11Seal implements SealWrapper {
  readonly type = 'pkcs11';
  private key: Promise<KmsKey> | null = null;

  constructor(
    private readonly s: Pkcs11SealSettings,
    private readonly logger: Logger,
  ) {}

  private open(): Promise<KmsKey> {
    this.key ??= (async () => {
      return openPkcs11Key({
        library: this.s.lib,
        slot: this.s.slot,
        tokenLabel: this.s.tokenLabel,
        pin: this.s.pin,
        keyLabel: this.s.keyLabel || undefined,
        keyId: this.s.keyId,
        mechanism: this.s.mechanism,
        generate: this.s.generateKey,
        // Vault generates 2048-bit RSA seal keys (reference managed-keys-wire.md 3.2).
        keyBits: this.s.mechanism === '0x0009' ? 2048 : undefined,
        forceRwSession: this.s.forceRwSession,
        maxParallel: this.s.maxParallel,
        rsaOaepHash: this.s.rsaOaepHash,
      });
    })().catch((e: unknown) => {
      this.key = null; // try again next time (token back, pin fixed)
      throw new Error(`pkcs11 seal: ${(e as Error).message}`);
    });
    return this.key;
  }

  /** Open (and with generate_key, create) the key before init writes anything. */
  async init(): Promise<void> {
    await this.open();
  }

  private aad(): Buffer | undefined {
    return this.s.mechanism === '0x1087' ? AAD : undefined;
  }

  async encrypt(plaintext: Buffer): Promise<SealBlob> {
    const key = await this.open();
    const ct = await key.encrypt(plaintext, { aad: this.aad() });
    return { seal_type: this.type, key_id: this.s.keyLabel || this.s.keyId || '', ciphertext: ct.toString('base64') };
  }

  async decrypt(blob: SealBlob): Promise<Buffer> {
    const key = await this.open();
    try {
      return await key.decrypt(Buffer.from(blob.ciphertext, 'base64'), { aad: this.aad() });
    } catch (e) {
      throw new Error(`pkcs11 seal: cannot unwrap the stored key with "${blob.key_id}": ${(e as Error).message}`);
    }
  }

  async close(): Promise<void> {
    const k = this.key;
    this.key = null;
    if (k) await (await k.catch(() => null))?.close();
    void this.logger;
  }
}
