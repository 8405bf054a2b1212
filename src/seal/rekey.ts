/**
 * Rekey of the unseal key (Shamir: new shares and a new master key; auto seal: a new master key
 * wrapped by the seal) or of the recovery key (auto seal), with Vault's optional verification of the
 * new shares. One rekey per target may be in progress; its key parts live in memory only.
 * Anchors: vault/rekey.go, http/sys_rekey.go.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { invalid, KeyholdError } from '../framework/errors.js';
import type { Logger } from '../framework/context.js';
import type { Backend } from '../storage/backend.js';
import type { Keychain } from './keychain.js';
import {
  barrierShares,
  forgetPreviousKeyring,
  openKeyring,
  rewrapKeyring,
  writeBlob,
  writeSealConfig,
  BARRIER_KEYS_PATH,
  RECOVERY_KEY_PATH,
  type SealBlob,
  type SealConfig,
} from './seal.js';
import {
  KeyParts,
  checkKeyLength,
  combineShares,
  decodeKeyText,
  sameKey,
  shareConfigError,
  splitKey,
  type ShareConfig,
} from './shamir.js';

/** Rekey request (sys/rekey/init, sys/rekey-recovery-key/init). */
export interface RekeyParams {
  secret_shares: number;
  secret_threshold: number;
  pgp_keys?: string[];
  backup?: boolean;
  require_verification?: boolean;
}

interface RekeyState {
  nonce: string;
  config: ShareConfig;
  verificationRequired: boolean;
  parts: KeyParts;
  /** After the old key's threshold is met with verification on: the new key and the new shares given back. */
  verification: { nonce: string; key: Buffer; parts: KeyParts } | null;
  /** Shamir barrier rekey waiting for verification: the verified current master key. */
  oldMaster?: Buffer;
  /** New shares are encrypted to these PGP keys (issue 27), with their fingerprints. */
  pgpKeys: string[] | null;
  pgpFingerprints: string[] | null;
  /** Keep the PGP-encrypted shares at core/unseal-keys-backup (sys/rekey/backup). */
  backup: boolean;
}

/** Rekey status (GET sys/rekey/init), Vault's RekeyStatusResponse. */
export interface RekeyStatus {
  nonce: string;
  started: boolean;
  t: number;
  n: number;
  progress: number;
  required: number;
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

/** Result of a rekey update that reached the threshold. */
export interface RekeyResult {
  nonce: string;
  complete: true;
  keys: Buffer[];
  /** Set when the keys are PGP-encrypted (same order as the keys). */
  pgp_fingerprints: string[] | null;
  backup: boolean;
  verification_required: boolean;
  verification_nonce?: string;
}

/** What a rekey needs from the seal it belongs to (SealManager). */
export interface RekeyHost {
  readonly backend: Backend;
  readonly keychain: Keychain;
  readonly logger: Logger;
  /** The stored seal config; a rekey writes the new share config here and to storage. */
  config: SealConfig | null;
  /** Unseal keys are recovery keys (auto seal). */
  readonly recoverySeal: boolean;
  readonly barrierType: string;
  /** Wrap a key with the active auto seal. */
  wrapWithActive(key: Buffer): Promise<SealBlob>;
  /** The master key stored wrapped by the auto seal. */
  unwrapStoredMaster(): Promise<Buffer>;
  /** Vault's VerifyRecoveryKey: throws a 400 when `key` is not the stored recovery key. */
  verifyRecoveryKey(key: Buffer): Promise<void>;
  /** PGP keys checked (one per share), their fingerprints (issue 27). */
  checkPgpKeys(keys: string[] | undefined, shares: number, field: string): Promise<string[] | null>;
  /** Shares encrypted to their PGP keys (raw when no keys). */
  pgpShares(shares: Buffer[], keys: string[] | null | undefined, field: string): Promise<Buffer[]>;
}

/** The rekeys of one daemon's seal (sys/rekey/*, sys/rekey-recovery-key/*). */
export class Rekey {
  private pending: { barrier: RekeyState | null; recovery: RekeyState | null } = { barrier: null, recovery: null };

  constructor(private readonly seal: RekeyHost) {}

  private kindOf(recovery: boolean): 'barrier' | 'recovery' {
    if (recovery && !this.seal.recoverySeal) throw invalid('recovery rekeying not supported');
    return recovery ? 'recovery' : 'barrier';
  }

  /** Threshold of the keys a rekey asks for: the recovery config under an auto seal (Vault's RekeyThreshold). */
  private required(recovery: boolean): number {
    if (!this.seal.config) throw invalid('Vault is not initialized');
    return recovery || this.seal.recoverySeal
      ? (this.seal.config.recovery ?? { secret_threshold: 1 }).secret_threshold
      : barrierShares(this.seal.config).secret_threshold;
  }

  /** GET sys/rekey/init. */
  status(recovery: boolean): RekeyStatus {
    if (!this.seal.config) throw invalid('server is not yet initialized');
    const r = this.pending[this.kindOf(recovery)];
    const out: RekeyStatus = {
      nonce: '',
      started: false,
      t: 0,
      n: 0,
      progress: 0,
      required: this.required(recovery),
      pgp_fingerprints: null,
      backup: false,
      verification_required: false,
    };
    if (r) {
      Object.assign(out, {
        nonce: r.nonce,
        started: true,
        t: r.config.secret_threshold,
        n: r.config.secret_shares,
        progress: r.parts.progress,
        verification_required: r.verificationRequired,
        pgp_fingerprints: r.pgpFingerprints,
        backup: r.backup,
      });
      if (r.verification) out.verification_nonce = r.verification.nonce;
    }
    return out;
  }

  /** PUT sys/rekey/init: start a rekey (Vault's RekeyInit / BarrierRekeyInit / RecoveryRekeyInit). */
  async init(recovery: boolean, p: RekeyParams): Promise<RekeyStatus> {
    const kind = this.kindOf(recovery);
    if (p.backup && !p.pgp_keys?.length)
      throw invalid('cannot request a backup of the new keys without providing PGP keys for encryption');
    const fingerprints = p.pgp_keys?.length
      ? await this.seal.checkPgpKeys(
          p.pgp_keys,
          kind === 'barrier' && this.seal.recoverySeal ? 0 : p.secret_shares,
          'pgp_keys',
        )
      : null;
    const config: ShareConfig = { secret_shares: p.secret_shares, secret_threshold: p.secret_threshold };
    if (config.secret_threshold > config.secret_shares)
      throw invalid('provided threshold greater than the total shares');
    // Under an auto seal the barrier key is stored, never split: Vault forces 1/1 [vault src vault/rekey.go].
    if (kind === 'barrier' && this.seal.recoverySeal) {
      if (p.require_verification)
        throw invalid('requiring verification not supported when rekeying the barrier key with recovery keys');
      config.secret_shares = 1;
      config.secret_threshold = 1;
    }
    const why = shareConfigError(config);
    if (why)
      throw invalid(
        `${kind === 'recovery' ? 'invalid recovery configuration' : 'invalid rekey seal configuration'}: ${why}`,
      );
    if (this.pending[kind]) throw invalid('rekey already in progress');
    this.pending[kind] = {
      nonce: randomUUID(),
      config,
      verificationRequired: Boolean(p.require_verification),
      parts: new KeyParts(''),
      verification: null,
      pgpKeys: fingerprints ? p.pgp_keys! : null,
      pgpFingerprints: fingerprints,
      backup: Boolean(p.backup),
    };
    this.seal.logger.info('rekey initialized', {
      target: kind,
      shares: config.secret_shares,
      threshold: config.secret_threshold,
      verification_required: Boolean(p.require_verification),
    });
    return this.status(recovery);
  }

  /** DELETE sys/rekey/init. */
  cancel(recovery: boolean): void {
    const kind = this.kindOf(recovery);
    this.wipe(this.pending[kind]);
    this.pending[kind] = null;
  }

  private wipe(r: RekeyState | null): void {
    r?.parts.wipe();
    r?.verification?.parts.wipe();
    r?.verification?.key.fill(0);
    r?.oldMaster?.fill(0);
  }

  /** PUT sys/rekey/update: one key part of the current key; the new shares once the threshold is met. */
  async update(recovery: boolean, keyText: string, nonce: string): Promise<RekeyResult | null> {
    const kind = this.kindOf(recovery);
    if (!this.seal.config) throw invalid('Vault is not initialized');
    const key = decodeKeyText(keyText);
    checkKeyLength(key);
    const r = this.pending[kind];
    if (!r) throw invalid(kind === 'barrier' ? 'no barrier rekey in progress' : 'no recovery rekey in progress');
    if (r.verification)
      throw invalid(
        `rekey operation already finished; verification must be performed; nonce for the verification operation is "${r.verification.nonce}"`,
      );
    if (nonce !== r.nonce) throw invalid(`incorrect nonce supplied; nonce for this rekey operation is "${r.nonce}"`);
    if (!r.parts.add(key))
      throw invalid(
        kind === 'barrier'
          ? 'given key has already been provided during this generation operation'
          : 'given key has already been provided during this rekey operation',
      );
    const need = this.required(recovery);
    if (r.parts.progress < need) return null;
    let current: Buffer;
    try {
      current = await combineShares(r.parts.parts, need);
    } catch (e) {
      throw invalid(
        `failed to compute ${kind === 'barrier' && !this.seal.recoverySeal ? 'root' : 'recovery'} key: ${(e as Error).message}`,
      );
    } finally {
      r.parts.wipe();
    }
    let oldMaster: Buffer | undefined;
    try {
      if (this.seal.recoverySeal) {
        try {
          await this.seal.verifyRecoveryKey(current);
        } catch (e) {
          if (e instanceof KeyholdError)
            throw invalid(
              `recovery key verification failed: ${e.message.replace(/^failed to verify recovery key: recovery key verification failed: /, '')}`,
            );
          throw e;
        }
      } else {
        try {
          await openKeyring(this.seal.backend, current);
        } catch {
          throw invalid('root key verification failed: the key parts do not rebuild the current unseal key');
        }
        if (kind === 'barrier') oldMaster = Buffer.from(current);
      }
    } finally {
      current.fill(0);
    }
    const fresh = randomBytes(32);
    // Auto seal barrier rekey: the new master key is stored wrapped, no shares are handed out.
    const plainKeys =
      kind === 'barrier' && this.seal.recoverySeal
        ? []
        : await splitKey(fresh, r.config.secret_shares, r.config.secret_threshold);
    // Issue 27: each new share encrypted to its PGP key, and kept for sys/rekey/backup when asked.
    const keys = r.pgpKeys ? await this.seal.pgpShares(plainKeys, r.pgpKeys, 'pgp_keys') : plainKeys;
    const pgp = { pgp_fingerprints: r.pgpKeys ? r.pgpFingerprints : null, backup: r.backup };
    if (r.backup && r.pgpFingerprints) await this.writeBackup(kind, r.nonce, r.pgpFingerprints, keys);
    if (r.verificationRequired) {
      r.verification = { nonce: randomUUID(), key: fresh, parts: new KeyParts('') };
      r.oldMaster = oldMaster;
      return {
        nonce: r.nonce,
        complete: true,
        keys,
        verification_required: true,
        verification_nonce: r.verification.nonce,
        ...pgp,
      };
    }
    try {
      await this.perform(kind, fresh, r.config, oldMaster);
    } finally {
      oldMaster?.fill(0);
    }
    this.pending[kind] = null;
    fresh.fill(0);
    return { nonce: r.nonce, complete: true, keys, verification_required: false, ...pgp };
  }

  /** Where sys/rekey/backup keeps PGP-encrypted shares (Vault's paths; ciphertext only, so outside the barrier). */
  private backupPath(kind: 'barrier' | 'recovery'): string {
    return kind === 'barrier' ? 'core/unseal-keys-backup' : 'core/recovery-keys-backup';
  }

  private async writeBackup(
    kind: 'barrier' | 'recovery',
    nonce: string,
    fingerprints: string[],
    keys: Buffer[],
  ): Promise<void> {
    const hex: Record<string, string[]> = {};
    const b64: Record<string, string[]> = {};
    fingerprints.forEach((fp, i) => {
      (hex[fp] ??= []).push(keys[i]!.toString('hex'));
      (b64[fp] ??= []).push(keys[i]!.toString('base64'));
    });
    await this.seal.backend.put(
      this.backupPath(kind),
      Buffer.from(JSON.stringify({ nonce, keys: hex, keys_base64: b64 })),
    );
  }

  /** GET sys/rekey/backup: the PGP-encrypted shares kept by the last rekey with backup=true. */
  async backup(
    recovery: boolean,
  ): Promise<{ nonce: string; keys: Record<string, string[]>; keys_base64: Record<string, string[]> }> {
    const b = await this.seal.backend.get(this.backupPath(recovery ? 'recovery' : 'barrier'));
    if (!b) throw invalid('no backed-up keys found');
    return JSON.parse(b.toString('utf8')) as {
      nonce: string;
      keys: Record<string, string[]>;
      keys_base64: Record<string, string[]>;
    };
  }

  /** DELETE sys/rekey/backup. */
  async deleteBackup(recovery: boolean): Promise<void> {
    await this.seal.backend.delete(this.backupPath(recovery ? 'recovery' : 'barrier'));
  }

  /** GET sys/rekey/verify. */
  verifyStatus(recovery: boolean): { nonce: string; started: boolean; t: number; n: number; progress: number } {
    if (!this.seal.config) throw invalid('server is not yet initialized');
    const r = this.pending[this.kindOf(recovery)];
    if (!r) throw invalid('no rekey configuration found');
    return {
      nonce: r.verification?.nonce ?? '',
      started: Boolean(r.verification),
      t: r.config.secret_threshold,
      n: r.config.secret_shares,
      progress: r.verification?.parts.progress ?? 0,
    };
  }

  /** DELETE sys/rekey/verify: start the verification over with a new nonce. */
  verifyRestart(recovery: boolean): void {
    const r = this.pending[this.kindOf(recovery)];
    if (!r) throw invalid('no rekey in progress');
    if (!r.verification) throw invalid('no rekey verification in progress');
    r.verification.parts.wipe();
    r.verification = { nonce: randomUUID(), key: r.verification.key, parts: new KeyParts('') };
  }

  /** PUT sys/rekey/verify: one of the new key's parts; the rekey is applied when they rebuild the new key. */
  async verify(recovery: boolean, keyText: string, nonce: string): Promise<{ nonce: string; complete: true } | null> {
    const kind = this.kindOf(recovery);
    const key = decodeKeyText(keyText);
    checkKeyLength(key);
    const r = this.pending[kind];
    if (!r) throw invalid('no rekey in progress');
    const v = r.verification;
    if (!v) throw invalid('no rekey verification in progress');
    if (nonce !== v.nonce) throw invalid(`incorrect nonce supplied; nonce for this verify operation is "${v.nonce}"`);
    if (!v.parts.add(key)) throw invalid('given key has already been provided during this verify operation');
    if (v.parts.progress < r.config.secret_threshold) return null;
    let rebuilt: Buffer | null = null;
    try {
      rebuilt = await combineShares(v.parts.parts, r.config.secret_threshold).catch(() => null);
    } finally {
      v.parts.wipe();
    }
    const ok = rebuilt !== null && sameKey(rebuilt, v.key);
    rebuilt?.fill(0);
    if (!ok) throw invalid('rekey verification failed; incorrect key shares supplied');
    await this.perform(kind, v.key, r.config, r.oldMaster);
    this.wipe(r);
    this.pending[kind] = null;
    return { nonce: v.nonce, complete: true };
  }

  /** Install a new unseal/master key (barrier) or recovery key, then the new share config. */
  private async perform(
    kind: 'barrier' | 'recovery',
    fresh: Buffer,
    shares: ShareConfig,
    oldMaster?: Buffer,
  ): Promise<void> {
    const cfg = this.seal.config!;
    if (kind === 'recovery') {
      await writeBlob(this.seal.backend, RECOVERY_KEY_PATH, await this.seal.wrapWithActive(fresh));
      this.seal.config = { ...cfg, recovery: shares };
      await writeSealConfig(this.seal.backend, this.seal.config);
      this.seal.logger.info('recovery key rekeyed', {
        shares: shares.secret_shares,
        threshold: shares.secret_threshold,
      });
      return;
    }
    // Shamir: the verified unseal key is the master key; auto seal: unwrap the stored one.
    const master = oldMaster ? Buffer.from(oldMaster) : await this.seal.unwrapStoredMaster();
    const barrierKey = await openKeyring(this.seal.backend, master);
    master.fill(0);
    try {
      if (this.seal.recoverySeal) {
        // Vault's auto-seal barrier rekey: a new root key stored wrapped by the seal.
        const blob = await this.seal.wrapWithActive(fresh);
        await rewrapKeyring(this.seal.backend, barrierKey, fresh);
        await writeBlob(this.seal.backend, BARRIER_KEYS_PATH, blob);
        await forgetPreviousKeyring(this.seal.backend);
        this.seal.logger.info('security barrier rekeyed', { seal: this.seal.barrierType });
        return;
      }
      await rewrapKeyring(this.seal.backend, barrierKey, fresh);
      const oldAccount = cfg.keychain_account;
      const account = oldAccount ? await this.keepInKeychainAlways(fresh) : null;
      this.seal.config = { ...cfg, ...shares, keychain_account: account };
      await writeSealConfig(this.seal.backend, this.seal.config);
      await forgetPreviousKeyring(this.seal.backend);
      if (oldAccount) await this.seal.keychain.delete(oldAccount).catch(() => {});
      this.seal.logger.info('security barrier rekeyed', {
        shares: shares.secret_shares,
        threshold: shares.secret_threshold,
        keychain: account !== null,
      });
    } finally {
      barrierKey.fill(0);
    }
  }

  private async keepInKeychainAlways(master: Buffer): Promise<string | null> {
    const account = `storage-${randomUUID()}`;
    try {
      await this.seal.keychain.set(account, master);
      return account;
    } catch (e) {
      this.seal.logger.warn('could not store the new master key in the keychain; unseal with the new key shares', {
        reason: (e as Error).message,
      });
      return null;
    }
  }

  /** Forget every rekey in progress and its key parts (daemon stop). */
  close(): void {
    for (const r of [this.pending.barrier, this.pending.recovery]) this.wipe(r);
  }
}
