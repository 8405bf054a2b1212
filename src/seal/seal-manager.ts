/**
 * The seal as Vault runs it: init with Shamir shares (or recovery shares under an auto seal), unseal
 * by collecting shares (progress, nonce, reset) and seal migration (`unseal -migrate`); rekeys of the
 * unseal or recovery key are in rekey.ts. The core owns the barrier; this class owns everything
 * stored outside it (core/seal-config, core/keyring, the wrapped keys) and the key parts collected in
 * memory; the key moves of a seal migration are in seal-migration.ts. Anchors: vault/core.go (unsealFragment, getUnsealKey, migrateSeal), vault/init.go,
 * http/sys_init.go, http/sys_seal.go.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { invalid, KeyholdError, unavailable } from '../framework/errors.js';
import type { Logger } from '../framework/context.js';
import type { Backend } from '../storage/backend.js';
import type { Keychain } from './keychain.js';
import {
  BARRIER_KEYS_PATH,
  RECOVERY_KEY_PATH,
  barrierShares,
  initializeStorage,
  openKeyring,
  readBlob,
  readSealConfig,
  sealTypeOf,
  writeBlob,
  writeSealConfig,
  type SealBlob,
  type SealConfig,
} from './seal.js';
import {
  KeyParts,
  checkKeyLength,
  combineShares,
  sameKey,
  shareConfigError,
  splitKey,
  type ShareConfig,
} from './shamir.js';
import type { ConfiguredSeals, SealWrapper } from './wrapper.js';
import { Rekey } from './rekey.js';
import { RootGeneration } from './generate-root.js';
import { encryptShares, pgpEncrypt, pgpFingerprint } from './pgp.js';
import { migrateSeal } from './seal-migration.js';

/** What `sys/init` asks for (absent numbers are undefined, so Vault's "present" checks can be made). */
export interface InitParams {
  secret_shares?: number;
  secret_threshold?: number;
  stored_shares?: number;
  pgp_keys?: string[];
  recovery_shares?: number;
  recovery_threshold?: number;
  recovery_pgp_keys?: string[];
  root_token_pgp_key?: string;
  /** keyhold: keep the master key in the OS keychain (Shamir seal only). */
  useKeychain: boolean;
}

/** What init produced (the core unseals with `master` and makes the root token). */
export interface InitOutcome {
  master: Buffer;
  keys: Buffer[];
  recoveryKeys: Buffer[];
  keychain: boolean;
  shares: ShareConfig;
  recovery: ShareConfig | null;
}

/** Seal-status fields owned by the seal. */
export interface SealStatusFields {
  type: string;
  t: number;
  n: number;
  progress: number;
  nonce: string;
  migration: boolean;
  recovery_seal: boolean;
  recovery_seal_type?: string;
}

const SHAMIR = 'shamir';

/** Where unattended unseal retries wait between attempts (auto seal server down at start). */
const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

/** Seal state and operations of one daemon. */
export class SealManager {
  config: SealConfig | null = null;
  private unlock: KeyParts | null = null;
  /** Rekeys of the unseal or recovery key (sys/rekey*). */
  readonly rekey: Rekey;
  /** Set when storage's seal differs from the configured one: the seal to migrate away from. */
  private migrateFrom: { type: string; wrapper: SealWrapper | null } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** sys/generate-root (issue 27): shares of the unseal (or recovery) key make a new root token. */
  readonly rootGeneration = new RootGeneration({
    required: () => this.status().t,
    verifyKey: (k) => this.verifyUnsealKey(k),
  });

  constructor(
    readonly backend: Backend,
    readonly keychain: Keychain,
    readonly logger: Logger,
    private readonly seals: ConfiguredSeals = { active: null, disabled: null },
  ) {
    this.rekey = new Rekey(this);
  }

  /** Type of the configured (active) seal. */
  get configuredType(): string {
    return this.seals.active?.type ?? SHAMIR;
  }

  /** Barrier seal type: what storage was sealed with, or the configured seal before init. */
  get barrierType(): string {
    return this.config ? sealTypeOf(this.config) : this.configuredType;
  }

  /** Whether unseal keys are recovery keys (auto seal), as seal-status `recovery_seal` says. */
  get recoverySeal(): boolean {
    return this.barrierType !== SHAMIR;
  }

  /** A seal migration is pending (configured seal differs from storage's). */
  get migration(): boolean {
    return this.migrateFrom !== null;
  }

  /** Read the stored config and compare it with the configured seals; throws when they cannot work together. */
  async load(): Promise<void> {
    this.config = await readSealConfig(this.backend);
    this.migrateFrom = null;
    if (!this.config) return;
    const stored = sealTypeOf(this.config);
    const configured = this.configuredType;
    if (stored === configured) {
      if (this.seals.disabled)
        this.logger.warn(
          'a disabled seal is configured but storage already uses the configured seal; the migration is done, remove the disabled stanza',
          { type: this.seals.disabled.type },
        );
      return;
    }
    if (stored === SHAMIR) {
      this.migrateFrom = { type: SHAMIR, wrapper: null };
    } else if (this.seals.disabled?.type === stored) {
      this.migrateFrom = { type: stored, wrapper: this.seals.disabled };
    } else {
      throw new Error(
        `seal: storage is sealed by seal "${stored}" but the configuration ${configured === SHAMIR ? 'has no seal stanza' : `names seal "${configured}"`}; ` +
          `to migrate away from it, keep its stanza with disabled = "true" and run \`keyhold operator unseal -migrate\``,
      );
    }
    this.logger.warn('seal migration pending: unseal with `keyhold operator unseal -migrate`', {
      from: this.migrateFrom.type,
      to: configured,
    });
  }

  /**
   * Re-read the stored config: another daemon on shared storage may have initialised it, rekeyed or
   * migrated it since this one started. Errors are logged, the last good config stays.
   */
  async refresh(): Promise<void> {
    try {
      const before = this.migrateFrom;
      await this.load();
      if (!before && this.migrateFrom) this.logger.warn('storage was migrated to another seal by another daemon');
    } catch (e) {
      this.logger.warn('seal config could not be re-read', { reason: (e as Error).message });
    }
  }

  /** Seal-status fields (Vault: t/n of the recovery config under an auto seal, 0 before init). */
  status(): SealStatusFields {
    const cfg = this.config;
    let t = 0;
    let n = 0;
    if (cfg) {
      const sc = this.recoverySeal ? (cfg.recovery ?? { secret_shares: 1, secret_threshold: 1 }) : barrierShares(cfg);
      t = sc.secret_threshold;
      n = sc.secret_shares;
      // During a migration the keys asked for are the old seal's.
      if (this.migrateFrom) ({ secret_threshold: t, secret_shares: n } = this.unsealConfig(this.migrateFrom.type));
    }
    const out: SealStatusFields = {
      type: this.barrierType,
      t,
      n,
      progress: this.unlock?.progress ?? 0,
      nonce: this.unlock?.nonce ?? '',
      migration: this.migration,
      recovery_seal: this.recoverySeal,
    };
    if (this.recoverySeal) out.recovery_seal_type = SHAMIR;
    return out;
  }

  /** Shares config that unseal keys of a seal of `type` follow (recovery config for auto seals). */
  private unsealConfig(type: string): ShareConfig {
    const cfg = this.config!;
    if (type === SHAMIR) return sealTypeOf(cfg) === SHAMIR ? barrierShares(cfg) : (cfg.recovery ?? barrierShares(cfg));
    return cfg.recovery ?? { secret_shares: 1, secret_threshold: 1 };
  }

  // ---------------------------------------------------------------- init

  /** Initialise storage (Vault's Core.Initialize); the caller unseals with `master`. */
  async initialize(p: InitParams): Promise<InitOutcome> {
    if (this.config || (await readSealConfig(this.backend))) throw invalid('Vault is already initialized');
    const auto = this.seals.active;
    const present = (names: Array<[string, unknown]>) =>
      names.filter(([, v]) => v !== undefined && v !== 0 && !(Array.isArray(v) && v.length === 0)).map(([k]) => k);
    if (auto) {
      // Vault: barrier parameters with an auto seal are refused, naming them [vault-1.14 src http/sys_init.go].
      const bad = present([
        ['secret_shares', p.secret_shares],
        ['secret_threshold', p.secret_threshold],
        ['pgp_keys', p.pgp_keys],
      ]);
      if (bad.length) throw invalid(`parameters ${bad.join(',')} not applicable to seal type ${auto.type}`);
    } else {
      const bad = present([
        ['recovery_shares', p.recovery_shares],
        ['recovery_threshold', p.recovery_threshold],
        ['recovery_pgp_keys', p.recovery_pgp_keys],
      ]);
      if (bad.length) throw invalid(`parameters ${bad.join(',')} not applicable to seal type shamir`);
    }
    // PGP keys are checked before anything is written: a key that cannot be used must not cost the shares (issue 27).
    await this.checkPgpKeys(p.pgp_keys, auto ? 0 : (p.secret_shares ?? 1), 'pgp_keys');
    await this.checkPgpKeys(p.recovery_pgp_keys, auto ? (p.recovery_shares ?? 1) : 0, 'recovery_pgp_keys');
    if (p.root_token_pgp_key) await pgpFingerprint(p.root_token_pgp_key, 'root_token_pgp_key');

    if (auto) {
      // keyhold default when both are absent: one recovery key (Vault's CLI defaults to 5/3, its API requires them).
      const recovery: ShareConfig =
        p.recovery_shares === undefined && p.recovery_threshold === undefined
          ? { secret_shares: 1, secret_threshold: 1 }
          : { secret_shares: p.recovery_shares ?? 0, secret_threshold: p.recovery_threshold ?? 0 };
      if (recovery.secret_shares < 1) throw invalid('recovery configuration must specify a positive number of shares');
      const why = shareConfigError(recovery);
      if (why) throw invalid(`invalid recovery configuration: ${why}`);
      await this.viaSeal(async () => auto.init?.());
      const recoveryKey = randomBytes(32);
      const { master, config } = await initializeStorage(this.backend, null, {
        extra: { type: auto.type, secret_shares: 1, secret_threshold: 1, recovery },
        beforeConfig: async (m) => {
          await writeBlob(this.backend, BARRIER_KEYS_PATH, await this.encryptWith(auto, m));
          await writeBlob(this.backend, RECOVERY_KEY_PATH, await this.encryptWith(auto, recoveryKey));
        },
      });
      this.config = config;
      const recoveryKeys = await this.pgpShares(
        await splitKey(recoveryKey, recovery.secret_shares, recovery.secret_threshold),
        p.recovery_pgp_keys,
        'recovery_pgp_keys',
      );
      recoveryKey.fill(0);
      return {
        master,
        keys: [],
        recoveryKeys,
        keychain: false,
        shares: { secret_shares: 1, secret_threshold: 1 },
        recovery,
      };
    }

    const shares: ShareConfig =
      p.secret_shares === undefined && p.secret_threshold === undefined
        ? { secret_shares: 1, secret_threshold: 1 }
        : { secret_shares: p.secret_shares ?? 0, secret_threshold: p.secret_threshold ?? 0 };
    const why = shareConfigError(shares);
    if (why) throw invalid(`invalid seal configuration: ${why}`);
    const account = p.useKeychain ? `storage-${randomUUID()}` : null;
    const { master, config } = await initializeStorage(this.backend, account, { extra: { type: SHAMIR, ...shares } });
    let keychain = false;
    if (account) {
      try {
        await this.keychain.set(account, master);
        keychain = true;
      } catch (e) {
        this.logger.warn('could not store master key in keychain; use the unseal key(s) to unseal', {
          reason: (e as Error).message,
        });
        config.keychain_account = null;
        await writeSealConfig(this.backend, config);
      }
    }
    this.config = config;
    const keys = await this.pgpShares(
      await splitKey(master, shares.secret_shares, shares.secret_threshold),
      p.pgp_keys,
      'pgp_keys',
    );
    return { master, keys, recoveryKeys: [], keychain, shares, recovery: null };
  }

  /** `keys` must be usable OpenPGP keys, one per share (none given: nothing to check); their fingerprints. */
  async checkPgpKeys(keys: string[] | undefined, shares: number, field: string): Promise<string[] | null> {
    if (!keys?.length) return null;
    if (shares === 0) throw invalid(field, 'not applicable to this seal type');
    if (keys.length !== shares)
      throw invalid(field, `${keys.length} PGP keys given for ${shares} shares; give one key per share`);
    const out: string[] = [];
    for (let i = 0; i < keys.length; i++) out.push(await pgpFingerprint(keys[i]!, `${field}[${i}]`));
    return out;
  }

  /** Shares as handed out: raw, or each encrypted to its PGP key (Vault: the hex of the share, encrypted). */
  async pgpShares(shares: Buffer[], keys: string[] | null | undefined, field: string): Promise<Buffer[]> {
    if (!keys?.length) return shares;
    try {
      return (await encryptShares(shares, keys, field)).map((e) => e.ciphertext);
    } finally {
      for (const sh of shares) sh.fill(0);
    }
  }

  /** Encrypt a new root token to `root_token_pgp_key` (sys/init); base64 of the OpenPGP message, as Vault. */
  async pgpRootToken(token: string, key: string): Promise<string> {
    return (await pgpEncrypt(key, Buffer.from(token, 'utf8'), 'root_token_pgp_key')).ciphertext.toString('base64');
  }

  // ---------------------------------------------------------------- unattended unseal

  /** The master key without a person: from the OS keychain (Shamir) or the auto seal; null when neither can give it. */
  async storedMaster(): Promise<Buffer | null> {
    const cfg = this.config;
    if (!cfg || this.migrateFrom) return null;
    if (sealTypeOf(cfg) === SHAMIR) {
      if (!cfg.keychain_account) return null;
      try {
        const master = await this.keychain.get(cfg.keychain_account);
        if (!master) this.logger.warn('keychain has no master key for this storage; waiting for operator unseal');
        return master;
      } catch (e) {
        this.logger.warn('keychain unavailable; waiting for operator unseal', { reason: (e as Error).message });
        return null;
      }
    }
    const blob = await readBlob(this.backend, BARRIER_KEYS_PATH);
    if (!blob) throw new Error(`seal: ${BARRIER_KEYS_PATH} is missing; storage cannot be auto-unsealed`);
    return this.decryptBlob(blob);
  }

  /**
   * Unseal without a person at start. An auto seal whose server is down is retried in the background
   * (1 s doubling to 30 s) until it answers, so a node restarts unattended once its seal is back.
   */
  async autoUnseal(unseal: (master: Buffer) => Promise<void>, isSealed: () => boolean): Promise<void> {
    const attempt = async (): Promise<boolean> => {
      const master = await this.storedMaster();
      if (!master) return true; // nothing to wait for (no keychain entry, migration pending)
      try {
        await unseal(master);
      } finally {
        master.fill(0);
      }
      return true;
    };
    if (!this.config || this.migrateFrom || sealTypeOf(this.config) === SHAMIR) {
      await attempt();
      return;
    }
    let delay = RETRY_MIN_MS;
    const retry = async (): Promise<void> => {
      this.retryTimer = null;
      if (this.closed || !isSealed()) return;
      try {
        await attempt();
      } catch (e) {
        this.logger.warn('auto-unseal failed; retrying', {
          seal: this.barrierType,
          reason: (e as Error).message,
          retry_in_ms: delay,
        });
        this.retryTimer = setTimeout(() => void retry(), delay);
        this.retryTimer.unref();
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    };
    await retry();
  }

  /** Stop retries and close the seals' sessions. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.unlock?.wipe();
    this.rekey.close();
    await this.seals.active?.close?.();
    await this.seals.disabled?.close?.();
  }

  /** A seal that cannot be reached or refuses answers 503 naming it (a client's request is not at fault). */
  private async viaSeal<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof KeyholdError) throw e;
      throw unavailable((e as Error).message);
    }
  }

  private encryptWith(w: SealWrapper, plaintext: Buffer): Promise<SealBlob> {
    return this.viaSeal(() => w.encrypt(plaintext));
  }

  /** Wrap a key with the active auto seal (a rekey's new key). */
  wrapWithActive(key: Buffer): Promise<SealBlob> {
    return this.encryptWith(this.seals.active!, key);
  }

  /** The master key stored wrapped by the auto seal (a rekey of the barrier key under an auto seal). */
  async unwrapStoredMaster(): Promise<Buffer> {
    return this.decryptBlob((await readBlob(this.backend, BARRIER_KEYS_PATH))!);
  }

  /** Decrypt a blob with a configured seal of its type (active first, then the disabled one). */
  private decryptBlob(blob: SealBlob): Promise<Buffer> {
    return this.viaSeal(() => this.decryptBlobRaw(blob));
  }

  private async decryptBlobRaw(blob: SealBlob): Promise<Buffer> {
    const candidates = [this.seals.active, this.seals.disabled].filter(
      (w): w is SealWrapper => w?.type === blob.seal_type,
    );
    if (!candidates.length)
      throw new Error(`seal: a key is wrapped by seal "${blob.seal_type}", which is not configured`);
    let last: unknown;
    for (const w of candidates) {
      try {
        return await w.decrypt(blob);
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  // ---------------------------------------------------------------- operator unseal

  /** Forget the key parts given so far (`reset`). */
  resetUnseal(): void {
    this.unlock?.wipe();
    this.unlock = null;
  }

  /**
   * One unseal (or, under an auto seal, recovery) key part. Returns the master key once the threshold
   * is met (after performing the seal migration when `migrate`), null while more parts are needed.
   */
  async submitUnsealKey(key: Buffer, migrate: boolean): Promise<Buffer | null> {
    if (!this.config) throw invalid('Vault is not initialized');
    checkKeyLength(key);
    if (migrate && !this.migrateFrom) throw invalid("can't perform a seal migration, no migration seal found");
    if (!migrate && this.migrateFrom) throw invalid('migrate option not provided and seal migration is pending');
    const sealType = migrate ? this.migrateFrom!.type : sealTypeOf(this.config);
    const need = this.unsealConfig(sealType).secret_threshold;
    this.unlock ??= new KeyParts(randomUUID());
    if (!this.unlock.add(key)) return null;
    if (this.unlock.progress < need) return null;
    const parts = this.unlock;
    this.unlock = null;
    let combined: Buffer;
    try {
      combined = await combineShares(parts.parts, need);
    } catch (e) {
      throw invalid(`failed to compute combined key: ${(e as Error).message}`);
    } finally {
      parts.wipe();
    }
    try {
      const master = await this.masterFromUnsealKey(sealType, combined);
      if (!migrate) return master;
      return await this.migrate(combined, master);
    } finally {
      combined.fill(0);
    }
  }

  /**
   * Check a combined unseal key (recovery key under an auto seal) without unsealing: root token
   * generation (issue 27) proves key holders agree this way. Throws invalid when it is not the key.
   */
  async verifyUnsealKey(combined: Buffer): Promise<void> {
    if (!this.config) throw invalid('Vault is not initialized');
    const master = await this.masterFromUnsealKey(sealTypeOf(this.config), combined);
    master.fill(0);
  }

  /** Turn a combined unseal key into the master key, checking it (Shamir: it opens the keyring; auto: it matches the stored recovery key). */
  private async masterFromUnsealKey(sealType: string, combined: Buffer): Promise<Buffer> {
    if (sealType === SHAMIR) {
      try {
        await openKeyring(this.backend, combined);
      } catch (e) {
        throw invalid((e as Error).message.replace('recovery key', 'unseal key'));
      }
      return Buffer.from(combined);
    }
    await this.verifyRecoveryKey(combined);
    const blob = await readBlob(this.backend, BARRIER_KEYS_PATH);
    if (!blob) throw new Error(`seal: ${BARRIER_KEYS_PATH} is missing`);
    return this.decryptBlob(blob);
  }

  /** Vault's VerifyRecoveryKey: the stored recovery key, unwrapped by the seal, must equal `key`. */
  async verifyRecoveryKey(key: Buffer): Promise<void> {
    const blob = await readBlob(this.backend, RECOVERY_KEY_PATH);
    if (!blob) throw new Error(`seal: ${RECOVERY_KEY_PATH} is missing`);
    const stored = await this.decryptBlob(blob);
    try {
      if (!sameKey(stored, key))
        throw invalid(
          'failed to verify recovery key: recovery key verification failed: supplied key does not match stored keys',
        );
    } finally {
      stored.fill(0);
    }
  }

  /** Seal migration after the old seal's keys were verified (seal-migration.ts): returns the master key to unseal with. */
  private async migrate(unsealKey: Buffer, master: Buffer): Promise<Buffer> {
    const from = this.migrateFrom!.type;
    const ctx = {
      backend: this.backend,
      keychain: this.keychain,
      logger: this.logger,
      encryptWith: (w: SealWrapper, key: Buffer) => this.encryptWith(w, key),
    };
    const done = await migrateSeal(ctx, this.config!, from, this.seals.active, unsealKey, master);
    this.config = done.config;
    this.migrateFrom = null;
    this.logger.info('seal migration complete', { from, to: sealTypeOf(done.config) });
    return done.master;
  }
}
