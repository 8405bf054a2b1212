/**
 * Sealed or unsealed, and the ways between: init, unseal without a person (keychain, auto seal) or by
 * key shares, and seal. Unsealing opens the barrier, loads tokens and the mount tables, follows
 * other daemons' changes and starts the cubbyhole sweeper, then emits `after-unseal`; sealing runs
 * `before-seal` and undoes it all. The seal configuration, key shares, migration and rekeys are the
 * SealManager's (src/seal/).
 */
import type { IdentityStore } from '../../auth/identity.js';
import type { PolicyStore } from '../../auth/policies.js';
import type { TokenStore } from '../../auth/tokens.js';
import type { SysSeal } from '../../engines/sys/sys-parts.js';
import type { Logger } from '../../framework/context.js';
import { invalid } from '../../framework/errors.js';
import type { LifecycleEvents } from '../../framework/events.js';
import type { ManagedKeyRegistry } from '../../kms/managed-keys.js';
import { NoKeychain, type Keychain } from '../../seal/keychain.js';
import type { SealConfig } from '../../seal/seal.js';
import { openKeyring } from '../../seal/seal.js';
import type { Rekey } from '../../seal/rekey.js';
import type { InitOutcome, InitParams, SealManager } from '../../seal/seal-manager.js';
import { checkKeyLength, decodeKeyText } from '../../seal/shamir.js';
import type { Backend } from '../../storage/backend.js';
import type { Barrier } from '../../storage/barrier.js';
import type { Invalidator, RoleView } from '../contracts.js';
import type { Access } from './access.js';
import type { MountTable } from './mount-table.js';

/** Result of `sys/init`: the key shares (or recovery shares) and the root token, shown once. */
export interface InitResult extends Omit<InitOutcome, 'master'> {
  rootToken: string;
}

/** What the seal state opens and closes. */
export interface SealStateDeps {
  backend: Backend;
  barrier: Barrier;
  keychain: Keychain;
  logger: Logger;
  sealer: SealManager;
  events: LifecycleEvents;
  tokens: TokenStore;
  policies: PolicyStore;
  identity: IdentityStore;
  managedKeys: ManagedKeyRegistry;
  mounts: Pick<MountTable, 'load' | 'closeAll'>;
  access: Pick<Access, 'startSweeper' | 'stopSweeper' | 'startTokenExpiry' | 'invalidateAcls'>;
  invalidator: Pick<Invalidator, 'invalidate'>;
  role: RoleView;
  /** True on a node of a cluster (HA storage). */
  clustered(): boolean;
}

/** The seal state of one daemon. */
export class SealState implements SysSeal {
  readonly backend: Backend;
  readonly keychain: Keychain;
  /** Seal configuration, shares collected, seal migration. */
  readonly sealer: SealManager;
  /** Rekeys of the unseal or recovery key. */
  readonly rekey: Rekey;
  private readonly barrier: Barrier;
  private readonly logger: Logger;
  private unsealed = false;
  private unsealing: Promise<void> | null = null;
  private unwatch: (() => void) | null = null;

  constructor(private readonly deps: SealStateDeps) {
    this.backend = deps.backend;
    this.keychain = deps.keychain;
    this.sealer = deps.sealer;
    this.rekey = deps.sealer.rekey;
    this.barrier = deps.barrier;
    this.logger = deps.logger;
  }

  /** The stored seal configuration (null before init). */
  get sealConfig(): SealConfig | null {
    return this.sealer.config;
  }

  /** Read seal config; unseal without a person (OS keychain, or the auto seal, retried while it is down). */
  async start(): Promise<void> {
    await this.sealer.load();
    await this.sealer.autoUnseal(
      (master) => this.unseal(master),
      () => this.isSealed(),
    );
  }

  /** Re-read the seal config from storage (another node of a cluster may have initialised it). */
  async refreshSealConfig(): Promise<boolean> {
    if (this.isInitialized()) return true;
    await this.sealer.refresh();
    if (!this.isInitialized()) return false;
    // Initialised by another node since this one started: unseal without a person if we can.
    await this.start();
    return true;
  }

  isInitialized(): boolean {
    return this.sealer.config !== null;
  }
  isSealed(): boolean {
    return !this.unsealed;
  }

  /**
   * Initialise storage: key shares of the master key (Shamir, the keychain keeping the key itself when
   * possible) or recovery shares (auto seal), and the root token. keyhold stays unsealed after init.
   */
  async init(opts: InitParams & { rootTokenId?: string }): Promise<InitResult> {
    // A cluster node takes the HA lock before writing (only the lock holder may write).
    if (!this.isInitialized()) await this.sealer.refresh();
    if (this.isInitialized()) throw invalid('Vault is already initialized');
    await this.deps.events.emitInOrder('before-init');
    const { master, ...outcome } = await this.sealer.initialize(opts);
    try {
      await this.unseal(master);
    } finally {
      master.fill(0);
    }
    const root = await this.deps.tokens.create({
      policies: ['root'],
      display_name: 'root',
      id: opts.rootTokenId,
      orphan: true,
    });
    return { ...outcome, rootToken: root.id };
  }

  /** Unseal with a master key (from keychain or recovery key). */
  async unseal(master: Buffer): Promise<void> {
    if (this.unsealed) return;
    // Concurrent unseal calls (keychain at start, operator unseal) share one attempt.
    this.unsealing ??= this.doUnseal(master).finally(() => (this.unsealing = null));
    return this.unsealing;
  }

  private async doUnseal(master: Buffer): Promise<void> {
    const barrierKey = await openKeyring(this.backend, master);
    this.barrier.unseal(barrierKey);
    barrierKey.fill(0);
    try {
      await this.deps.tokens.init();
      await this.deps.mounts.load();
    } catch (e) {
      // Never stay half-unsealed: forget the key again and report.
      await this.deps.mounts.closeAll({ ignoreErrors: true });
      this.barrier.seal();
      throw e;
    }
    this.unsealed = true;
    // Shared storage (an HA backend) tells us about records other daemons changed.
    if (this.backend.watch) {
      this.unwatch = this.backend.watch((key) => {
        this.deps.invalidator
          .invalidate(key)
          .catch((e: unknown) => this.logger.error('cache invalidation failed', { key, error: (e as Error)?.message }));
      });
    }
    // Expiry revokes on a timer (and cascades) on the node that writes: a single daemon or the active.
    if (!this.deps.role.isStandby()) this.deps.access.startTokenExpiry();
    this.deps.access.startSweeper();
    await this.deps.events.emitInOrder('after-unseal');
    this.logger.info('unsealed');
  }

  /** One unseal key part (hex or base64) from `sys/unseal`; unseals once the threshold is met. */
  async submitUnsealKey(text: string, migrate = false): Promise<void> {
    // Shared storage: another daemon may have initialised or rekeyed it since we started.
    if (this.isSealed()) await this.sealer.refresh();
    if (!this.isInitialized()) throw invalid('Vault is not initialized');
    const key = decodeKeyText(text);
    try {
      if (!this.isSealed()) return checkKeyLength(key);
      const master = await this.sealer.submitUnsealKey(key, migrate);
      if (!master) return;
      try {
        await this.unseal(master);
        await this.rememberInKeychain(master);
      } finally {
        master.fill(0);
      }
    } finally {
      key.fill(0);
    }
  }

  /**
   * Shared storage (a cluster): a node unsealed with key shares keeps the master key in its own OS
   * keychain under the storage's account, so it unseals itself at its next start, as the node that
   * ran init does. Best effort: without a keychain the node waits for `operator unseal`.
   */
  private async rememberInKeychain(master: Buffer): Promise<void> {
    const account = this.sealConfig?.keychain_account;
    if (!account || !this.deps.clustered() || this.keychain instanceof NoKeychain) return;
    try {
      if (await this.keychain.get(account)) return;
      await this.keychain.set(account, master);
      this.logger.info("master key stored in this node's keychain: it unseals itself at the next start");
    } catch (e) {
      this.logger.warn("could not store the master key in this node's keychain; unseal after each start", {
        reason: (e as Error).message,
      });
    }
  }

  /** Forget the unseal key parts given so far (`sys/unseal` with `reset`). */
  resetUnseal(): void {
    if (!this.isSealed()) throw invalid('vault is unsealed');
    this.sealer.resetUnseal();
  }

  /** Seal: stop engines, forget keys. */
  async seal(): Promise<void> {
    if (!this.unsealed) return;
    this.unwatch?.();
    this.unwatch = null;
    this.deps.access.stopSweeper();
    await this.deps.events.emitInOrder('before-seal');
    // Forget managed-key configurations (PINs, AWS secrets) and close their sessions.
    this.deps.managedKeys.invalidate();
    await this.deps.mounts.closeAll();
    this.unsealed = false;
    this.deps.tokens.clear();
    this.deps.identity.clear();
    this.deps.policies.clear();
    this.deps.access.invalidateAcls();
    this.barrier.seal();
    this.logger.info('sealed');
  }
}
