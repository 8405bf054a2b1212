/** What the sys and token routes need from the core (implemented by server/core.ts). */
import type { PolicyStore } from '../../auth/policies.js';
import type { TokenStore } from '../../auth/tokens.js';
import type { IdentityStore } from '../../auth/identity.js';
import type { TokenRoleStore } from '../../auth/token-roles.js';
import type { Clock, MountInfo, TokenInfo } from '../../framework/context.js';
import type { ManagedKeyRegistry } from '../../kms/managed-keys.js';
import type { InitParams, SealManager } from '../../seal/seal-manager.js';
import type { WrappingService } from '../../auth/wrapping.js';
import type { BarrierKeyring } from '../../storage/keyring-rotation.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import type { AutoSnapshots } from '../../server/auto-snapshots.js';

/** A node's place in a cluster (sys/leader, sys/health). */
export interface HaStatus {
  haEnabled: boolean;
  role: 'sealed' | 'standby' | 'active';
  isSelf: boolean;
  activeTime: string | null;
  leaderAddress: string;
  leaderClusterAddress: string;
  clusterName: string;
  /** Standbys serve reads (sys/health answers 473 for them, as for a Vault performance standby). */
  standbyReads: boolean;
}

/** The core as seen by system routes. */
export interface SysCore {
  readonly version: string;
  readonly clock: Clock;
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  readonly tokenRoles: TokenRoleStore;
  /** sys/managed-keys (PKCS#11 and AWS KMS keys). */
  readonly managedKeys: ManagedKeyRegistry;
  readonly backend: { describe(): string };
  readonly keychain: { describe(): string };
  readonly sealConfig: { storage_id: string; keychain_account: string | null; initialized_time: string } | null;
  readonly logger: { warn(msg: string, fields?: Record<string, unknown>): void };
  /** Barrier key terms (issue 27). */
  readonly barrierKeys: Pick<BarrierKeyring, 'rotate' | 'status' | 'config' | 'setConfig'>;
  /** Snapshot save and restore (issue 27). */
  readonly snapshots: { save(): Promise<Buffer>; restore(body: Buffer | undefined, force: boolean): Promise<unknown> };
  /** Scheduled snapshots (issue 27). */
  readonly autoSnapshots: Pick<AutoSnapshots, 'list' | 'get' | 'put' | 'delete' | 'statusOf'>;
  /** Metrics; absent without a telemetry stanza (issue 27). */
  readonly telemetry?: Telemetry;
  isInitialized(): boolean;
  /** Re-read the seal config (shared storage initialised by another node); true when initialised. */
  refreshSealConfig(): Promise<boolean>;
  isSealed(): boolean;
  /** Seal state, shares, rekeys (type-only: the sys routes call it, never construct it). */
  readonly sealer: Pick<SealManager, 'status' | 'rekeyStatus' | 'rekeyInit' | 'rekeyCancel' | 'rekeyUpdate' | 'rekeyVerifyStatus' | 'rekeyVerifyRestart' | 'rekeyVerify' | 'recoverySeal' | 'barrierType' | 'refresh' | 'verifyUnsealKey' | 'rootGeneration' | 'rekeyBackup' | 'deleteRekeyBackup' | 'pgpRootToken'>;
  init(opts: InitParams): Promise<{ keys: Buffer[]; recoveryKeys: Buffer[]; rootToken: string; keychain: boolean }>;
  submitUnsealKey(key: string, migrate?: boolean): Promise<void>;
  resetUnseal(): void;
  seal(): Promise<void>;
  mounts(): MountInfo[];
  mount(path: string, type: string, opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> }): Promise<MountInfo>;
  unmount(path: string): Promise<void>;
  tune(path: string, changes: { description?: string; config?: Record<string, unknown>; options?: Record<string, string> }): Promise<string[] | void>;
  reload(opts: { mounts?: string[]; plugin?: string }): Promise<string[]>;
  findMount(pathOrAccessor: string): MountInfo | undefined;
  /** Auth mounts including auth/token/ (paths `auth/<name>/`). */
  authMounts(): MountInfo[];
  findAuthMount(path: string): MountInfo | undefined;
  enableAuth(path: string, type: string, opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown>; local?: boolean; seal_wrap?: boolean }): Promise<MountInfo>;
  disableAuth(path: string): Promise<void>;
  tuneAuth(path: string, changes: { description?: string; config?: Record<string, unknown>; options?: Record<string, string> }): Promise<void>;
  invalidateAcls(): void;
  capabilities(token: TokenInfo, path: string): Promise<string[]>;
  haStatus(): HaStatus;
  /** sys/ha-status nodes (empty without HA). */
  haNodes(): Promise<Array<Record<string, unknown>>>;
  /** sys/step-down on the active node. */
  stepDown(): Promise<void>;
  resultantAcl(token: TokenInfo): Promise<Record<string, unknown>>;
  lookupToken(id: string, opts?: { peek?: boolean }): Promise<TokenInfo | null>;
  readonly wrapping: WrappingService;
}
