/**
 * The keyhold core, a composition root: it builds the stores (tokens, policies, identities, managed
 * keys, cubbyholes) and the parts that work on them, wires them together, and answers the router
 * (RouterCore) by delegating to them. The parts, each in its own file:
 *   seal-state.ts    sealed or unsealed: init, unseal, seal, and what happens at each
 *   mount-table.ts   both mount tables and the live engine instances
 *   access.ts        token lookup, ACLs, capability answers, the cubbyhole sweeper
 *   cluster-role.ts  standby or active, and the HA answers of sys/
 *   invalidation.ts  other daemons' changes to shared storage
 * The internal engines (sys/, auth/token/, identity/) get a bag of these parts (engines/sys/sys-parts.ts).
 */
import { PolicyStore } from '../../auth/policies.js';
import { WrappingService } from '../../auth/wrapping.js';
import { cubbyholeEngine, destroyCubbyhole } from '../../engines/cubbyhole/index.js';
import { TokenStore } from '../../auth/tokens.js';
import { IdentityStore } from '../../auth/identity.js';
import { TokenRoleStore } from '../../auth/token-roles.js';
import type { Clock, CoreServices, Logger, MountInfo, TokenInfo } from '../../framework/context.js';
import { LocalEventBus } from '../../framework/events.js';
import { identityEngineFor } from '../../engines/sys/identity-routes.js';
import { sysEngine } from '../sys-engine.js';
import { tokenEngine } from '../../engines/sys/token-routes.js';
import { withParts } from '../../engines/sys/with-parts.js';
import type { IdentityParts, MountChanges, SysParts, TokenParts } from '../../engines/sys/sys-parts.js';
import { Barrier } from '../../storage/barrier.js';
import { NoncePool } from '../../crypto/nonce-pool.js';
import { prefixed, type Backend, type Storage } from '../../storage/backend.js';
import type { Keychain } from '../../seal/keychain.js';
import { attachAudit, type AuditBroker } from '../../audit/audit-broker.js';
import { ManagedKeyRegistry, type KmsLibraryConfig } from '../../kms/managed-keys.js';
import type { SealConfig } from '../../seal/seal.js';
import { SealManager, type InitParams } from '../../seal/seal-manager.js';
import type { ConfiguredSeals } from '../../seal/wrapper.js';
import type { AuditHook, MountedEngine } from '../flow.js';
import type { Authorizer, RouterCore } from '../router-core.js';
import type { ClusterRouting } from '../forward.js';
import type { ClusterHost, InternalModules } from '../contracts.js';
import { issueLoginToken } from '../login-tokens.js';
import { LoginMfa } from '../../auth/mfa/login-mfa.js';
import { loginMfaModules } from '../../engines/login-mfa/index.js';
import { Access } from './access.js';
import { ClusterRole } from './cluster-role.js';
import { CacheInvalidation } from './invalidation.js';
import { MountTable } from './mount-table.js';
import { INTERNAL_PREFIX } from './mount-paths.js';
import { SealState, type InitResult } from './seal-state.js';
import type { LogControl } from '../../framework/log-control.js';
import { MigrationLog } from '../../engines/sys/remount.js';
import { attachQuotas } from '../../quotas/attach-quotas.js';
import type { QuotaManager } from '../../quotas/quota-manager.js';
import { attachCors, type CorsPolicy } from '../cors.js';
import { InFlightRequests } from '../in-flight.js';
import { recordVersion, versionHistory } from '../version-history.js';
import { attachBarrierKeyring, type BarrierKeyring } from '../../storage/keyring-rotation.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { SnapshotService } from '../snapshot-service.js';
import { AutoSnapshots } from '../auto-snapshots.js';
import type { SysOps } from '../../engines/sys/ops-parts.js';

export type { InitResult } from './seal-state.js';

/** Options the daemon passes in. */
export interface CoreOptions {
  backend: Backend;
  keychain: Keychain;
  logger: Logger;
  clock?: Clock;
  maxRequestSize: number;
  version: string;
  /** Start as a cluster standby (HA storage): engines run no background work until the node is active. */
  standby?: boolean;
  /** `kms_library` stanzas: the only PKCS#11 modules managed keys may load. */
  kmsLibraries?: KmsLibraryConfig[];
  /** Auto seals from the server config (none: Shamir with the OS keychain). */
  seals?: ConfiguredSeals;
  /** The server's api_addr (identity tokens' default issuer). */
  apiAddr?: string;
  /** `reported_vault_version`: the version seal-status and health report (engines/sys/reported-version.ts). */
  reportedVersion?: string;
  /** The daemon's log control (sys/loggers, sys/monitor); without it those routes answer 400. */
  logs?: LogControl;
}

/** The keyhold core. */
export class Core implements RouterCore, ClusterHost {
  readonly backend: Backend;
  readonly barrier: Barrier;
  readonly keychain: Keychain;
  readonly logger: Logger;
  readonly clock: Clock;
  /** KV change events and the lifecycle events (`before-init`, `after-unseal`, `before-seal`). */
  readonly events: LocalEventBus;
  readonly maxRequestSize: number;
  readonly version: string;
  readonly apiAddr?: string;
  readonly reportedVersion?: string;
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  /** Login MFA (identity/mfa/, sys/mfa/validate, the MFA step of every login, X-Vault-MFA). */
  readonly loginMfa: LoginMfa;
  readonly tokenRoles: TokenRoleStore;
  /** sys/managed-keys: configurations behind the barrier, live PKCS#11/AWS KMS keys. */
  readonly managedKeys: ManagedKeyRegistry;
  /** Response wrapping (X-Vault-Wrap-TTL, sys/wrapping/*). */
  readonly wrapping: WrappingService;
  /** Per-token cubbyholes (behind the barrier). */
  readonly cubbyholes: Storage;
  /** Seal configuration, shares collected, rekeys, seal migration. */
  readonly sealer: SealManager;
  audit?: AuditHook;
  private readonly auditBroker: AuditBroker;
  readonly authorizer: Authorizer;
  // The parts.
  readonly sealState: SealState;
  readonly mountTable: MountTable;
  readonly access: Access;
  readonly role: ClusterRole;
  readonly invalidation: CacheInvalidation;
  // Issue 28 (sharing a server): quotas, CORS, log control, requests in progress, moves.
  /** Rate-limit quotas (sys/quotas/*; the router's quota stage asks them). */
  readonly quotas: QuotaManager;
  /** CORS for browsers (sys/config/cors; the router's first step). */
  readonly cors: CorsPolicy;
  /** Runtime log levels and monitors (sys/loggers, sys/monitor). */
  readonly logs?: LogControl;
  /** Requests in progress on this node (sys/in-flight-req; the router adds and removes them). */
  readonly inFlight = new InFlightRequests();
  /** Moves answered by sys/remount/status. */
  readonly migrations = new MigrationLog();
  /** Barrier key terms: sys/rotate, sys/key-status (issue 27). */
  readonly barrierKeys: BarrierKeyring;
  /** Metrics, when the config has a telemetry stanza (issue 27; set by the daemon). */
  telemetry?: Telemetry;
  /** sys/storage/raft/snapshot (issue 27). */
  readonly snapshots: SnapshotService;
  /** sys/storage/raft/snapshot-auto (issue 27). */
  readonly autoSnapshots: AutoSnapshots;

  constructor(opts: CoreOptions) {
    this.backend = opts.backend;
    const nonces = new NoncePool();
    // The record cache serves single-writer storage (file, in-memory). On shared storage (a backend
    // that reports other nodes' writes) it stays off: there every read goes to PostgreSQL, as before.
    this.barrier = new Barrier(opts.backend, {
      nonce: (n) => nonces.take(n),
      cacheBytes: opts.backend.watch ? 0 : undefined,
    });
    this.keychain = opts.keychain;
    this.logger = opts.logger;
    this.sealer = new SealManager(opts.backend, opts.keychain, opts.logger, opts.seals);
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.events = new LocalEventBus((e) =>
      this.logger.error('event listener failed', { error: (e as Error)?.message }),
    );
    this.maxRequestSize = opts.maxRequestSize;
    this.version = opts.version;
    if (opts.apiAddr) this.apiAddr = opts.apiAddr;
    if (opts.reportedVersion) this.reportedVersion = opts.reportedVersion;
    this.tokens = new TokenStore(prefixed(this.barrier, 'sys/token/'), this.clock, (e) =>
      this.logger.error('token expiry failed', { error: (e as Error)?.message }),
    );
    this.policies = new PolicyStore(prefixed(this.barrier, 'sys/'), (name, reason) =>
      this.logger.error('stored policy does not parse; it grants nothing until rewritten', { policy: name, reason }),
    );
    // Aliases name their mount by accessor; the identity API checks and shows the live mount.
    this.identity = new IdentityStore(prefixed(this.barrier, 'sys/identity/'), this.clock, (accessor) => {
      const m = this.mountTable.findMount(accessor);
      return m?.accessor === accessor ? m : undefined;
    });
    this.loginMfa = new LoginMfa(prefixed(this.barrier, 'sys/mfa/'), this.clock, this.identity, (accessor) =>
      this.mountTable.authMounts().some((m) => m.accessor === accessor),
    );
    this.tokenRoles = new TokenRoleStore(prefixed(this.barrier, 'sys/token-roles/'));
    this.managedKeys = new ManagedKeyRegistry(
      prefixed(this.barrier, 'sys/managed-keys/'),
      opts.kmsLibraries ?? [],
      () => this.mounts(),
      this.logger,
    );
    this.cubbyholes = prefixed(this.barrier, INTERNAL_PREFIX['cubbyhole/']!);
    this.wrapping = new WrappingService(this.tokens, this.cubbyholes);
    // A token's cubbyhole is destroyed with it (Vault's cubbyhole semantics).
    this.tokens.onRevoke.push((e) => destroyCubbyhole(this.cubbyholes, e.hash + '/'));

    // The parts. Each reads the seal state and the role through the core (SealView, RoleView).
    const { tokens, policies, identity, cubbyholes, clock, logger } = this;
    this.access = new Access({ tokens, policies, identity, cubbyholes, clock, logger, seal: this, role: this });
    this.role = new ClusterRole(
      { seal: this, access: this.access, reloadAll: () => this.invalidation.reloadAll() },
      opts.standby ?? false,
    );
    this.authorizer = this.access.authorizer;
    const services: CoreServices = {
      issueLoginToken: (mount, login) => issueLoginToken(this.tokens, this.identity, mount, login, this.loginMfa),
      findMount: (p) => this.mountTable.findMount(p),
      engineOf: <T>(p: string) => this.mountTable.engineOf<T>(p),
      mounts: () => this.mountTable.list(),
      managedKeys: this.managedKeys,
      apiAddr: this.apiAddr,
    };
    let internal: InternalModules | null = null;
    this.mountTable = new MountTable({
      barrier: this.barrier,
      clock,
      logger,
      events: this.events,
      services,
      tokens,
      seal: this,
      role: this.role,
      internalModules: () => (internal ??= this.internalModules()),
    });
    this.quotas = attachQuotas(this);
    this.cors = attachCors(this);
    if (opts.logs) this.logs = opts.logs;
    // Issue 27: the keyring of barrier key terms loads first after unseal (its listener comes first).
    this.barrierKeys = attachBarrierKeyring(this);
    this.invalidation = new CacheInvalidation({
      quotas: this.quotas,
      cors: this.cors,
      barrierKeys: this.barrierKeys,
      barrier: this.barrier,
      sealer: this.sealer,
      seal: this,
      mounts: this.mountTable,
      access: this.access,
      tokens,
      policies,
      identity,
      managedKeys: this.managedKeys,
    });
    this.sealState = new SealState({
      backend: this.backend,
      barrier: this.barrier,
      keychain: this.keychain,
      logger,
      sealer: this.sealer,
      events: this.events,
      tokens,
      policies,
      identity,
      managedKeys: this.managedKeys,
      mounts: this.mountTable,
      access: this.access,
      invalidator: this.invalidation,
      role: this.role,
      clustered: () => this.cluster !== undefined,
    });
    // Audit devices load after unseal and close before seal (the first lifecycle listeners).
    this.auditBroker = attachAudit(this);
    this.audit = this.auditBroker;
    // The storage remembers each version it has run under (sys/version-history); the node that writes records it.
    this.events.on('after-unseal', async () => {
      if (!this.role.isStandby()) await recordVersion(this.barrier, this.version, this.clock.now());
    });
    this.snapshots = new SnapshotService(this, () => this.invalidation.reloadAll());
    this.autoSnapshots = new AutoSnapshots(this);
  }

  /** The operations parts of the sys engine (issue 27). */
  private opsParts(): SysOps {
    const core = this;
    return {
      logger: this.logger,
      initializedTime: () => this.sealConfig?.initialized_time ?? '',
      barrierKeys: this.barrierKeys,
      get telemetry() {
        return core.telemetry;
      },
      snapshots: this.snapshots,
      autoSnapshots: this.autoSnapshots,
    };
  }

  /** The internal mounts' modules; sys, token and identity are handed their parts of this core. */
  private internalModules(): InternalModules {
    const sysParts: SysParts = {
      version: this.version,
      ...(this.reportedVersion ? { reportedVersion: this.reportedVersion } : {}),
      clock: this.clock,
      seal: this.sealState,
      mounts: this.mountTable,
      access: this.access,
      cluster: this.role,
      tokens: this.tokens,
      policies: this.policies,
      managedKeys: this.managedKeys,
      wrapping: this.wrapping,
      audit: this.auditBroker,
      // Issue 28's routes (engines/sys/share-routes.ts).
      quotas: this.quotas,
      cors: this.cors,
      logs: this.logs,
      migrations: this.migrations,
      resolve: (p) => this.resolve(p),
      allMountPaths: () => this.mountTable.allMountPaths(),
      moveMount: (from, to) => this.moveMount(from, to),
      inFlightRequests: () => this.inFlight.view(),
      versionHistory: () => versionHistory(this.barrier),
      ops: this.opsParts(),
    };
    const tokenParts: TokenParts = {
      clock: this.clock,
      tokens: this.tokens,
      tokenRoles: this.tokenRoles,
      policies: this.policies,
      identity: this.identity,
    };
    const identityParts: IdentityParts = { identity: this.identity };
    return {
      sys: withParts(sysEngine, sysParts),
      sysParts,
      token: withParts(tokenEngine, tokenParts),
      identity: identityEngineFor(identityParts),
      cubbyhole: cubbyholeEngine((t) => this.tokens.hash(t.id) + '/'),
      mfa: loginMfaModules(this.loginMfa),
    };
  }

  /** Set on a cluster node (HA storage): the router's forwarding decisions. */
  get cluster(): ClusterRouting | undefined {
    return this.role.routing;
  }
  set cluster(routing: ClusterRouting | undefined) {
    this.role.routing = routing;
  }

  // ---- seal (core/seal-state.ts) ----

  /** The stored seal configuration (null before init). */
  get sealConfig(): SealConfig | null {
    return this.sealState.sealConfig;
  }

  /** Read seal config; unseal without a person (OS keychain, or the auto seal, retried while it is down). */
  start(): Promise<void> {
    return this.sealState.start();
  }

  /** Re-read the seal config from storage (another node of a cluster may have initialised it). */
  refreshSealConfig(): Promise<boolean> {
    return this.sealState.refreshSealConfig();
  }

  isInitialized(): boolean {
    return this.sealState.isInitialized();
  }

  isSealed(): boolean {
    return this.sealState.isSealed();
  }

  /** Initialise storage (shares and root token); keyhold stays unsealed after init. */
  init(opts: InitParams & { rootTokenId?: string }): Promise<InitResult> {
    return this.sealState.init(opts);
  }

  /** One unseal key part (hex or base64) from `sys/unseal`; unseals once the threshold is met. */
  submitUnsealKey(text: string, migrate = false): Promise<void> {
    return this.sealState.submitUnsealKey(text, migrate);
  }

  /** Seal: stop engines, forget keys. */
  seal(): Promise<void> {
    return this.sealState.seal();
  }

  /** Stop everything and close storage. */
  async close(): Promise<void> {
    await this.seal();
    await this.managedKeys.close();
    await this.sealer.close();
    await this.backend.close();
  }

  // ---- mounts (core/mount-table.ts) ----

  /** Mount an engine at `path`. */
  mount(
    path: string,
    type: string,
    opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> } = {},
  ): Promise<MountInfo> {
    return this.mountTable.mount(path, type, opts);
  }

  /** Unmount and delete all of a mount's data. */
  unmount(path: string): Promise<void> {
    return this.mountTable.unmount(path);
  }

  /** Update a mount's description/config/options (sys/mounts/:path/tune). */
  tune(path: string, changes: MountChanges): Promise<string[]> {
    return this.mountTable.tune(path, changes);
  }

  findMount(pathOrAccessor: string): MountInfo | undefined {
    return this.mountTable.findMount(pathOrAccessor);
  }

  engineOf<T>(mountPath: string): T | undefined {
    return this.mountTable.engineOf<T>(mountPath);
  }

  /** Secrets engine mounts, by path. */
  mounts(): MountInfo[] {
    return this.mountTable.list();
  }

  /** The mount serving a request path (RouterCore). */
  resolve(path: string): MountedEngine | null {
    return this.mountTable.resolve(path);
  }

  /** Move a mount (sys/remount); its quotas follow it, as Vault's handleRemount moves them. */
  async moveMount(from: string, to: string): Promise<MountInfo> {
    const m = await this.mountTable.moveMount(from, to);
    await this.quotas.remounted(from, to);
    return m;
  }

  // ---- tokens (core/access.ts) ----

  /** Token lookup for the router; compiles and caches the ACL of its policy set. */
  lookupToken(id: string, opts: { peek?: boolean } = {}): Promise<TokenInfo | null> {
    return this.access.lookupToken(id, opts);
  }

  /** The hot path's token lookup: answers only when no storage read or write is needed, else undefined. */
  cachedToken(id: string): TokenInfo | undefined {
    return this.access.cachedToken(id);
  }

  /** After a request that spent a token's last use: revoke it (RouterCore hook). */
  requestDone(token: TokenInfo): Promise<void> {
    return this.access.requestDone(token);
  }

  /** Destroy cubbyholes whose token has expired or is gone. */
  sweepCubbyholes(): Promise<void> {
    return this.access.sweepCubbyholes();
  }

  // ---- shared storage and the HA role (core/invalidation.ts, core/cluster-role.ts) ----

  /** Another daemon changed the record at `key` in shared storage: drop what this daemon cached of it. */
  invalidate(key: string): Promise<void> {
    return this.invalidation.invalidate(key);
  }

  /** True while this node is a cluster standby (serves reads and crypto, forwards writes). */
  isStandby(): boolean {
    return this.role.isStandby();
  }

  /** Switch between active and standby (engine instances are recreated). */
  setStandby(standby: boolean): Promise<void> {
    return this.role.setStandby(standby);
  }
}
