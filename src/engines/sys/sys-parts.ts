/**
 * What the internal engines (sys/, auth/token/, identity/) are given: a bag of the core's parts,
 * each typed by what these routes use of it. The core (server/core/) builds the bag; its
 * collaborators fit these interfaces as they are.
 */
import type { PolicyStore } from '../../auth/policies.js';
import type { TokenStore } from '../../auth/tokens.js';
import type { IdentityStore } from '../../auth/identity.js';
import type { TokenRoleStore } from '../../auth/token-roles.js';
import type { WrappingService } from '../../auth/wrapping.js';
import type { AuditBroker } from '../../audit/audit-broker.js';
import type { Clock, MountInfo, TokenInfo } from '../../framework/context.js';
import type { ManagedKeyRegistry } from '../../kms/managed-keys.js';
import type { InitParams, SealManager } from '../../seal/seal-manager.js';
import type { Rekey } from '../../seal/rekey.js';
import type { ShareParts } from './share-routes.js';
import type { SysOps } from './ops-parts.js';

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

/** The seal as sys/seal-status, sys/init, sys/unseal, sys/seal and sys/rekey* drive it (server/core/seal-state.ts). */
export interface SysSeal {
  readonly backend: { describe(): string };
  readonly keychain: { describe(): string };
  readonly sealConfig: { storage_id: string; keychain_account: string | null } | null;
  /** Seal status and config re-reads (type-only: the sys routes call it, never construct it). */
  readonly sealer: Pick<
    SealManager,
    'status' | 'recoverySeal' | 'barrierType' | 'refresh' | 'rootGeneration' | 'pgpRootToken'
  >;
  /** Rekeys of the unseal or recovery key. */
  readonly rekey: Pick<
    Rekey,
    'status' | 'init' | 'cancel' | 'update' | 'verifyStatus' | 'verifyRestart' | 'verify' | 'backup' | 'deleteBackup'
  >;
  isInitialized(): boolean;
  /** Re-read the seal config (shared storage initialised by another node); true when initialised. */
  refreshSealConfig(): Promise<boolean>;
  isSealed(): boolean;
  init(opts: InitParams): Promise<{ keys: Buffer[]; recoveryKeys: Buffer[]; rootToken: string; keychain: boolean }>;
  submitUnsealKey(key: string, migrate?: boolean): Promise<void>;
  resetUnseal(): void;
  seal(): Promise<void>;
}

/** Changes a mount (secrets engine or auth method) may take through its tune endpoint. */
export interface MountChanges {
  description?: string;
  config?: Record<string, unknown>;
  options?: Record<string, string>;
}

/** Both mount tables as sys/mounts, sys/auth, sys/plugins/reload and the UI routes use them (server/core/mount-table.ts). */
export interface SysMounts {
  /** Secrets engine mounts (not auth methods, not internal mounts), by path. */
  list(): MountInfo[];
  mount(
    path: string,
    type: string,
    opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> },
  ): Promise<MountInfo>;
  unmount(path: string): Promise<void>;
  tune(path: string, changes: MountChanges): Promise<string[] | void>;
  reload(opts: { mounts?: string[]; plugin?: string }): Promise<string[]>;
  findMount(pathOrAccessor: string): MountInfo | undefined;
  /** The live engine instance of a mount (typed by the caller). */
  engineOf<T>(mountPath: string): T | undefined;
  /** Auth mounts including auth/token/ (paths `auth/<name>/`). */
  authMounts(): MountInfo[];
  findAuthMount(path: string): MountInfo | undefined;
  enableAuth(
    path: string,
    type: string,
    opts: {
      description?: string;
      options?: Record<string, string> | null;
      config?: Record<string, unknown>;
      local?: boolean;
      seal_wrap?: boolean;
    },
  ): Promise<MountInfo>;
  disableAuth(path: string): Promise<void>;
  tuneAuth(path: string, changes: MountChanges): Promise<void>;
}

/** Tokens' ACLs as sys/capabilities*, the policy routes and the UI routes use them (server/core/access.ts). */
export interface SysAccess {
  /** Drop compiled ACLs (after a policy change). */
  invalidateAcls(): void;
  capabilities(token: TokenInfo, path: string): Promise<string[]>;
  resultantAcl(token: TokenInfo): Promise<Record<string, unknown>>;
  lookupToken(id: string, opts?: { peek?: boolean }): Promise<TokenInfo | null>;
}

/** The node's HA role as sys/leader, sys/health, sys/ha-status and sys/step-down read it (server/core/cluster-role.ts). */
export interface SysCluster {
  haStatus(): HaStatus;
  /** sys/ha-status nodes (empty without HA). */
  haNodes(): Promise<Array<Record<string, unknown>>>;
  /** sys/step-down on the active node (a no-op without HA). */
  stepDown(): Promise<void>;
}

/** The sys engine's instance: the core's parts the sys routes reach (with those of issue 28's routes, share-routes.ts). */
export interface SysParts extends ShareParts {
  readonly version: string;
  readonly clock: Clock;
  readonly seal: SysSeal;
  readonly mounts: SysMounts;
  readonly access: SysAccess;
  readonly cluster: SysCluster;
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  /** sys/managed-keys (PKCS#11 and AWS KMS keys). */
  readonly managedKeys: ManagedKeyRegistry;
  readonly wrapping: WrappingService;
  /** Audit devices (sys/audit*). */
  readonly audit: AuditBroker;
  /** Telemetry, barrier key terms, snapshots (issue 27). */
  readonly ops: SysOps;
}

/** The token engine's instance (auth/token/). */
export interface TokenParts {
  readonly clock: Clock;
  readonly tokens: TokenStore;
  readonly tokenRoles: TokenRoleStore;
  readonly policies: PolicyStore;
  /** Token lookups answer the entity's identity policies. */
  readonly identity: IdentityStore;
}

/** The identity engine's instance (identity/). */
export interface IdentityParts {
  readonly identity: IdentityStore;
}
