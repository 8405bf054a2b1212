/**
 * The core: seal state, barrier, mount table, tokens and policies, engine instances.
 * It implements what the router needs (RouterCore) and what engines may ask (CoreServices).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ACL, type AclRequest, type AclResult, type Policy } from '../auth/acl.js';
import { PolicyStore } from '../auth/policies.js';
import { WrappingService } from '../auth/wrapping.js';
import { cubbyholeEngine, destroyCubbyhole } from '../engines/cubbyhole/index.js';
import { TokenStore, tokenInfo } from '../auth/tokens.js';
import type { Clock, CoreServices, EngineEnv, EventBus, IssuedLogin, LoginAuth, Logger, MountInfo, TokenInfo } from '../framework/context.js';
import type { EngineModule } from '../framework/engine.js';
import { conflict, invalid } from '../framework/errors.js';
import { LocalEventBus } from '../framework/events.js';
import { AUTH_METHODS, ENGINES } from '../engines/registry.js';
import { kvV1Engine, type KvV1Backend } from '../engines/kv/kv-v1.js';
import type { KvBackend } from '../engines/kv/kv-backend.js';
import { identityEngine } from '../engines/sys/identity-routes.js';
import { IdentityStore } from '../auth/identity.js';
import { TokenRoleStore } from '../auth/token-roles.js';
import { issueLoginToken } from './login-tokens.js';
import { LoginMfa } from '../auth/mfa/login-mfa.js';
import { identityMfaEngine, sysMfaEngine } from '../engines/login-mfa/index.js';
import { sysEngine } from '../engines/sys/index.js';
import { tokenEngine } from '../engines/sys/token-routes.js';
import { syncEngine } from '../sync/index.js';
import { Barrier } from '../storage/barrier.js';
import { NoncePool } from '../crypto/nonce-pool.js';
import { getJSON, prefixed, putJSON, type Backend, type Storage } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { attachAudit } from '../audit/audit-broker.js';
import { ManagedKeyRegistry, type KmsLibraryConfig } from '../kms/managed-keys.js';
import type { SealConfig } from '../seal/seal.js';
import { SealManager, type InitParams, type InitOutcome } from '../seal/seal-manager.js';
import { openKeyring } from '../seal/seal.js';
import { checkKeyLength, decodeKeyText } from '../seal/shamir.js';
import type { ConfiguredSeals } from '../seal/wrapper.js';
import type { AuditHook, Authorizer, MountedEngine, RouterCore } from './router.js';
import type { ClusterRouting } from './forward.js';
import { haStatusOf } from './cluster.js';
import type { HaStatus } from '../engines/sys/sys-core.js';

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
}

interface Mounted extends MountedEngine {
  module: EngineModule;
  instance: { close?(): Promise<void>; invalidate?(key: string): void | Promise<void> };
  /** Internal mounts (sys, auth/token, sys/sync) are not listed or unmountable. */
  internal: boolean;
}

/** Where a mount's records live behind the barrier. */
function storagePrefixOf(m: { mount: MountInfo; internal: boolean }): string {
  return m.internal ? INTERNAL_PREFIX[m.mount.path]! : `logical/${m.mount.uuid}/`;
}

/** Storage prefixes of the internal mounts (sys/ itself keeps policies and tokens under sys/). */
const INTERNAL_PREFIX: Record<string, string> = { 'sys/': 'sys/', 'auth/token/': 'sys/token-engine/', 'sys/sync/': 'sys/sync/', 'cubbyhole/': 'sys/cubbyhole/', 'identity/': 'sys/identity-engine/', 'identity/mfa/': 'sys/mfa/', 'sys/mfa/': 'sys/mfa/' };

/** How often tokens' cubbyholes are checked for expired owners (an unused wrapping token is gone at its TTL). */
const CUBBYHOLE_SWEEP_MS = 30_000;

const MOUNTS_KEY = 'core/mounts';
/** Auth methods live in their own table, as Vault keeps core/auth apart from core/mounts. */
const AUTH_KEY = 'core/auth';

/** The module serving a mount-table entry (auth methods by type from their own registry). */
function moduleOf(m: MountInfo): EngineModule | undefined {
  if (m.table === 'auth') return AUTH_METHODS[m.type];
  // KV version 1 (and the legacy "generic" type) is its own module; `kv` with version 2 the versioned one.
  if (m.type === 'generic' || (m.type === 'kv' && m.options?.version !== '2')) return kvV1Engine as unknown as EngineModule;
  return ENGINES[m.type];
}

function accessorFor(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

/** Result of `sys/init`: the key shares (or recovery shares) and the root token, shown once. */
export interface InitResult extends Omit<InitOutcome, 'master'> {
  rootToken: string;
}

/** The keyhold core. */
export class Core implements RouterCore, CoreServices {
  readonly backend: Backend;
  readonly barrier: Barrier;
  readonly keychain: Keychain;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly events: EventBus;
  readonly maxRequestSize: number;
  readonly version: string;
  readonly apiAddr?: string;
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  readonly identity: IdentityStore;
  /** Login MFA (identity/mfa/, sys/mfa/validate, the MFA stage of every login). */
  readonly loginMfa: LoginMfa;
  readonly tokenRoles: TokenRoleStore;
  /** sys/managed-keys: configurations behind the barrier, live PKCS#11/AWS KMS keys. */
  readonly managedKeys: ManagedKeyRegistry;
  /** Response wrapping (X-Vault-Wrap-TTL, sys/wrapping/*). */
  readonly wrapping: WrappingService;
  /** Per-token cubbyholes (behind the barrier). */
  readonly cubbyholes: Storage;
  audit?: AuditHook;
  /** Set on a cluster node (HA storage): the router's forwarding decisions. */
  cluster?: ClusterRouting;
  /** Seal configuration, shares collected, rekeys, seal migration. */
  readonly sealer: SealManager;
  private unsealed = false;
  private mounted: Mounted[] = [];
  private aclCache = new Map<string, ACL>();
  /** aclCache key of a token's policy list (the entry's array, shared by its views): no join per request. */
  private readonly aclKeys = new WeakMap<readonly string[], string>();
  readonly authorizer: Authorizer;
  /** Hooks run after unseal and before seal (audit devices, schedulers). */
  readonly afterUnseal: Array<() => Promise<void>> = [];
  readonly beforeSeal: Array<() => Promise<void>> = [];
  /** Hooks run before init writes anything (a cluster node takes the HA lock first). */
  readonly beforeInit: Array<() => Promise<void>> = [];

  constructor(opts: CoreOptions) {
    this.backend = opts.backend;
    const nonces = new NoncePool();
    // The record cache serves single-writer storage (file, in-memory). On shared storage (a backend
    // that reports other nodes' writes) it stays off: there every read goes to PostgreSQL, as before.
    this.barrier = new Barrier(opts.backend, { nonce: (n) => nonces.take(n), cacheBytes: opts.backend.watch ? 0 : undefined });
    this.keychain = opts.keychain;
    this.logger = opts.logger;
    this.sealer = new SealManager(opts.backend, opts.keychain, opts.logger, opts.seals);
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.events = new LocalEventBus((e) => this.logger.error('event listener failed', { error: (e as Error)?.message }));
    this.maxRequestSize = opts.maxRequestSize;
    this.version = opts.version;
    if (opts.apiAddr) this.apiAddr = opts.apiAddr;
    this.standbyMode = opts.standby ?? false;
    this.tokens = new TokenStore(prefixed(this.barrier, 'sys/token/'), this.clock, (e) => this.logger.error('token expiry failed', { error: (e as Error)?.message }));
    this.policies = new PolicyStore(prefixed(this.barrier, 'sys/'), (name, reason) =>
      this.logger.error('stored policy does not parse; it grants nothing until rewritten', { policy: name, reason }),
    );
    this.identity = new IdentityStore(prefixed(this.barrier, 'sys/identity/'), this.clock);
    this.loginMfa = new LoginMfa(prefixed(this.barrier, 'sys/mfa/'), this.clock, this.identity, (accessor) => this.authMounts().some((m) => m.accessor === accessor));
    this.tokenRoles = new TokenRoleStore(prefixed(this.barrier, 'sys/token-roles/'));
    this.managedKeys = new ManagedKeyRegistry(prefixed(this.barrier, 'sys/managed-keys/'), opts.kmsLibraries ?? [], () => this.mounts(), this.logger);
    this.cubbyholes = prefixed(this.barrier, INTERNAL_PREFIX['cubbyhole/']!);
    this.wrapping = new WrappingService(this.tokens, this.cubbyholes, this.clock);
    // A token's cubbyhole is destroyed with it (Vault's cubbyhole semantics).
    this.tokens.onRevoke.push((e) => destroyCubbyhole(this.cubbyholes, e.hash + '/'));
    this.audit = attachAudit(this);
    this.authorizer = {
      allowed: (token, cap, path) => {
        if (token.root) return true;
        const acl = this.aclCache.get(this.aclKeyFor(token));
        return acl ? acl.allowed(cap, path) : false;
      },
      check: (token, req) => {
        if (token.root) return ROOT_RESULT;
        const acl = this.aclCache.get(this.aclKeyFor(token));
        return acl ? acl.check(req) : DENIED_RESULT;
      },
    };
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
    for (const h of this.beforeInit) await h();
    const { master, ...outcome } = await this.sealer.initialize(opts);
    try {
      await this.unseal(master);
    } finally {
      master.fill(0);
    }
    const root = await this.tokens.create({ policies: ['root'], display_name: 'root', id: opts.rootTokenId, orphan: true });
    return { ...outcome, rootToken: root.id };
  }

  /** Unseal with a master key (from keychain or recovery key). */
  async unseal(master: Buffer): Promise<void> {
    if (this.unsealed) return;
    // Concurrent unseal calls (keychain at start, operator unseal) share one attempt.
    this.unsealing ??= this.doUnseal(master).finally(() => (this.unsealing = null));
    return this.unsealing;
  }

  private unsealing: Promise<void> | null = null;
  private sweeper: NodeJS.Timeout | null = null;

  /** Run token expiry here (in the background: lookups check expiry and parents themselves meanwhile). */
  private startTokenExpiry(): void {
    this.tokens.startExpiry().catch((e: unknown) => this.logger.error('token expiry scan failed', { error: (e as Error)?.message }));
  }

  /** Destroy cubbyholes whose token has expired or is gone (tokens are otherwise only expired on lookup). */
  async sweepCubbyholes(): Promise<void> {
    // Deleting is writing: on a cluster only the active node sweeps.
    if (!this.unsealed || this.standbyMode) return;
    for (const name of await this.cubbyholes.list('')) {
      if (!name.endsWith('/')) continue;
      const hash = name.slice(0, -1);
      if (!(await this.tokens.liveHash(hash))) await destroyCubbyhole(this.cubbyholes, name);
    }
  }
  private unwatch: (() => void) | null = null;

  private async doUnseal(master: Buffer): Promise<void> {
    const barrierKey = await openKeyring(this.backend, master);
    this.barrier.unseal(barrierKey);
    barrierKey.fill(0);
    try {
      await this.tokens.init();
      await this.loadMounts();
    } catch (e) {
      // Never stay half-unsealed: forget the key again and report.
      for (const m of this.mounted) if ((m.instance as unknown) !== this) await m.instance.close?.().catch(() => {});
      this.mounted = [];
      this.barrier.seal();
      throw e;
    }
    this.unsealed = true;
    // Shared storage (an HA backend) tells us about records other daemons changed.
    if (this.backend.watch) {
      this.unwatch = this.backend.watch((key) => {
        this.invalidate(key).catch((e: unknown) => this.logger.error('cache invalidation failed', { key, error: (e as Error)?.message }));
      });
    }
    // Expiry revokes on a timer (and cascades) on the node that writes: a single daemon or the active.
    if (!this.standbyMode) this.startTokenExpiry();
    this.sweeper = setInterval(() => {
      this.sweepCubbyholes().catch((e: unknown) => this.logger.error('cubbyhole sweep failed', { error: (e as Error)?.message }));
    }, CUBBYHOLE_SWEEP_MS).unref();
    for (const h of this.afterUnseal) await h();
    this.logger.info('unsealed');
  }

  /**
   * Another process changed the record at `key` (a barrier path) in shared storage: drop what this
   * daemon cached of it. Mount table, policies and tokens are handled here; engine records go to the
   * engine's optional `invalidate(key)` with the key relative to its mount's storage.
   */
  async invalidate(key: string): Promise<void> {
    // First the barrier's record cache, so whatever reloads below reads the new record.
    if (key === '') this.barrier.clearCache();
    else this.barrier.forget(key);
    if (key === 'core/seal-config') return this.sealer.refresh();
    if (!this.unsealed) return;
    // '' = changes may have been missed (the feed reconnected): every cache starts over.
    if (key === '') return this.reloadAll();
    if (key === MOUNTS_KEY || key === AUTH_KEY) return this.reloadMountTable();
    if (key.startsWith('sys/identity/')) {
      this.identity.clear();
      return;
    }
    if (key.startsWith('sys/mfa/')) {
      this.loginMfa.forget();
      return;
    }
    if (key.startsWith('sys/policy/')) {
      this.policies.forget(key.slice('sys/policy/'.length));
      this.aclCache.clear();
      return;
    }
    if (key.startsWith('sys/token/id/')) {
      this.tokens.forget(key.slice('sys/token/id/'.length));
      return;
    }
    if (key.startsWith('sys/managed-keys/config/')) {
      this.managedKeys.invalidate();
      return;
    }
    // Longest storage prefix first (sys/sync/ before sys/).
    const owners = this.mounted.filter((m) => (m.instance as unknown) !== this && key.startsWith(storagePrefixOf(m)));
    owners.sort((a, b) => storagePrefixOf(b).length - storagePrefixOf(a).length);
    const owner = owners[0];
    if (!owner) return;
    if (owner.instance.invalidate) await owner.instance.invalidate(key.slice(storagePrefixOf(owner).length));
    // An engine that cannot invalidate selectively (sync's caches) is recreated, once per burst.
    else this.recreateSoon(owner);
  }

  private readonly recreating = new Set<string>();

  /** Recreate one mount's instance shortly (coalesces a burst of changes into one reload). */
  private recreateSoon(m: Mounted): void {
    const path = m.mount.path;
    if (this.recreating.has(path)) return;
    this.recreating.add(path);
    setTimeout(() => {
      this.recreating.delete(path);
      void this.recreate(path).catch((e: unknown) => this.logger.error('reloading a mount after a change failed', { path, error: (e as Error)?.message }));
    }, 20).unref();
  }

  private async recreate(path: string): Promise<void> {
    const m = this.mounted.find((x) => x.mount.path === path);
    if (!m || !this.unsealed || (m.instance as unknown) === this) return;
    const instance = await m.module.create(this.env(m.mount, prefixed(this.barrier, storagePrefixOf(m))));
    const cur = this.mounted.find((x) => x.mount.path === path);
    if (cur !== m) {
      await (instance as { close?(): Promise<void> }).close?.();
      return;
    }
    this.setMounted(this.mounted.map((x) => (x === m ? { ...m, instance } : x)));
    await m.instance.close?.();
  }

  /** Drop every cache and recreate every engine instance (role change, or changes possibly missed). */
  async reloadAll(): Promise<void> {
    if (!this.unsealed) return;
    this.tokens.forgetAll();
    this.policies.clear();
    this.aclCache.clear();
    const old = this.mounted;
    await this.loadMounts();
    for (const m of old) if ((m.instance as unknown) !== this) await m.instance.close?.().catch(() => {});
  }

  private standbyMode = false;

  /** True while this node is a cluster standby (serves reads and crypto, forwards writes). */
  isStandby(): boolean {
    return this.standbyMode;
  }

  /**
   * Switch between active and standby: engine instances are recreated so background work (auto-rotation,
   * sync worker) runs exactly when the node is active (design note §6: workers follow the role).
   */
  async setStandby(standby: boolean): Promise<void> {
    if (this.standbyMode === standby) return;
    this.standbyMode = standby;
    if (standby) this.tokens.stopExpiry();
    else if (this.unsealed) this.startTokenExpiry();
    await this.reloadAll();
  }

  /** Re-read the mount table: start new mounts, stop removed ones, take over changed descriptions. */
  private async reloadMountTable(): Promise<void> {
    const table = await this.readTables();
    const byUuid = new Map(table.map((m) => [m.uuid, m]));
    const next: Mounted[] = [];
    for (const m of this.mounted) {
      if (m.internal) next.push(m);
      else if (byUuid.has(m.mount.uuid)) {
        Object.assign(m.mount, byUuid.get(m.mount.uuid));
        byUuid.delete(m.mount.uuid);
        next.push(m);
      } else await m.instance.close?.();
    }
    for (const m of byUuid.values()) {
      const module = moduleOf(m);
      if (!module) continue;
      const instance = await module.create(this.env(m, prefixed(this.barrier, `logical/${m.uuid}/`)));
      next.push({ mount: m, routes: module.routes, module, instance, internal: false });
    }
    this.setMounted(next);
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
    if (!account || !this.cluster || this.keychain instanceof NoKeychain) return;
    try {
      if (await this.keychain.get(account)) return;
      await this.keychain.set(account, master);
      this.logger.info("master key stored in this node's keychain: it unseals itself at the next start");
    } catch (e) {
      this.logger.warn("could not store the master key in this node's keychain; unseal after each start", { reason: (e as Error).message });
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
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const h of this.beforeSeal) await h();
    // Forget managed-key configurations (PINs, AWS secrets) and close their sessions.
    this.managedKeys.invalidate();
    for (const m of this.mounted) if ((m.instance as unknown) !== this) await m.instance.close?.();
    this.mounted = [];
    this.unsealed = false;
    this.tokens.clear();
    this.identity.clear();
    this.policies.clear();
    this.aclCache.clear();
    this.barrier.seal();
    this.logger.info('sealed');
  }

  /** Stop everything and close storage. */
  async close(): Promise<void> {
    await this.seal();
    await this.managedKeys.close();
    await this.sealer.close();
    await this.backend.close();
  }

  // ---- mounts ----

  private env(mount: MountInfo, storage: Storage): EngineEnv {
    return { storage, mount, clock: this.clock, logger: this.logger, events: this.events, core: this, standby: this.standbyMode };
  }

  /** Both mount tables; auth entries marked `table: "auth"`. */
  private async readTables(): Promise<MountInfo[]> {
    const mounts = (await getJSON<MountInfo[]>(this.barrier, MOUNTS_KEY)) ?? [];
    const auth = (await getJSON<MountInfo[]>(this.barrier, AUTH_KEY)) ?? [];
    return [...mounts, ...auth.map((m) => ({ ...m, table: 'auth' as const }))];
  }

  private async loadMounts(): Promise<void> {
    const table = await this.readTables();
    const mounted: Mounted[] = [];
    const internal = async (module: EngineModule, path: string, storagePrefix: string) => {
      const mount: MountInfo = {
        path,
        type: module.type,
        accessor: `${module.accessorPrefix}_internal`,
        uuid: path,
        description: module.description,
        options: null,
        config: {},
        local: false,
        seal_wrap: false,
        external_entropy_access: false,
      };
      const instance = await module.create(this.env(mount, prefixed(this.barrier, storagePrefix)));
      mounted.push({ mount, routes: module.routes, module, instance, internal: true });
    };
    await internal(sysEngine, 'sys/', INTERNAL_PREFIX['sys/']!);
    await internal(tokenEngine, 'auth/token/', INTERNAL_PREFIX['auth/token/']!);
    await internal(syncEngine, 'sys/sync/', INTERNAL_PREFIX['sys/sync/']!);
    await internal(identityEngine, 'identity/', INTERNAL_PREFIX['identity/']!);
    await internal(identityMfaEngine, 'identity/mfa/', INTERNAL_PREFIX['identity/mfa/']!);
    await internal(sysMfaEngine, 'sys/mfa/', INTERNAL_PREFIX['sys/mfa/']!);
    // The token mount's accessor is stable per install (auth_token_<8 hex>, Vault's default token mount).
    const tokenMount = mounted.find((m) => m.mount.path === 'auth/token/')!.mount;
    const stored = await this.tokenMountRecord();
    tokenMount.accessor = stored.accessor;
    if (stored.description !== undefined) tokenMount.description = stored.description;
    if (stored.config) tokenMount.config = stored.config;
    tokenMount.table = 'auth';
    await internal(cubbyholeEngine((t) => this.tokens.hash(t.id) + '/'), 'cubbyhole/', INTERNAL_PREFIX['cubbyhole/']!);
    for (const m of table) {
      const module = moduleOf(m);
      if (!module) {
        this.logger.error('unknown engine type in mount table', { path: m.path, type: m.type });
        continue;
      }
      const instance = await module.create(this.env(m, prefixed(this.barrier, `logical/${m.uuid}/`)));
      mounted.push({ mount: m, routes: module.routes, module, instance, internal: false });
    }
    this.setMounted(mounted);
  }

  private setMounted(list: Mounted[]): void {
    // Longest path first so `sys/sync/` wins over `sys/`.
    this.mounted = list.sort((a, b) => b.mount.path.length - a.mount.path.length);
  }

  private async saveTable(): Promise<void> {
    const own = this.mounted.filter((m) => !m.internal);
    await putJSON(this.barrier, MOUNTS_KEY, own.filter((m) => m.mount.table !== 'auth').map((m) => m.mount));
    await putJSON(this.barrier, AUTH_KEY, own.filter((m) => m.mount.table === 'auth').map((m) => m.mount));
  }

  private async tokenMountRecord(): Promise<{ accessor: string; description?: string; config?: Record<string, unknown> }> {
    const stored = await getJSON<{ accessor: string; description?: string; config?: Record<string, unknown> }>(this.barrier, 'core/token-mount');
    if (stored) return stored;
    const rec = { accessor: accessorFor('auth_token') };
    await putJSON(this.barrier, 'core/token-mount', rec);
    return rec;
  }

  // ---- auth methods (sys/auth) ----

  /** Auth mounts, the token mount first (sys/auth). */
  authMounts(): MountInfo[] {
    return this.mounted.filter((m) => m.mount.table === 'auth').map((m) => m.mount).sort((a, b) => a.path.localeCompare(b.path));
  }

  /** The auth mount at `path` ("approle", "auth/approle/"), or undefined. */
  findAuthMount(path: string): MountInfo | undefined {
    let p: string;
    try {
      p = 'auth/' + normalizeMountPath(path.replace(/^\/*auth\//, ''));
    } catch {
      return undefined;
    }
    return this.mounted.find((m) => m.mount.table === 'auth' && m.mount.path === p)?.mount;
  }

  /** Enable an auth method at auth/<path>/ (sys/auth/:path). */
  async enableAuth(path: string, type: string, opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown>; local?: boolean; seal_wrap?: boolean }): Promise<MountInfo> {
    if (type === '') throw invalid('backend type must be specified as a string');
    if (type === 'token') throw invalid('token credential backend cannot be instantiated');
    const module = AUTH_METHODS[type];
    if (!module) throw invalid(`unknown auth method type "${type}"; supported: ${Object.keys(AUTH_METHODS).join(', ')}`);
    if (opts.options && 'version' in opts.options) throw invalid(`auth method "${type}" does not allow setting a version`);
    const p = 'auth/' + normalizeMountPath(path);
    for (const m of this.mounted) {
      if (m.mount.path === p || p.startsWith(m.mount.path) || m.mount.path.startsWith(p)) throw conflict(`path is already in use at ${p.slice(5)}`);
    }
    const used = new Set(this.mounted.map((m) => m.mount.accessor));
    let accessor = accessorFor(`auth_${type}`);
    while (used.has(accessor)) accessor = accessorFor(`auth_${type}`);
    const mount: MountInfo = {
      path: p,
      type,
      accessor,
      uuid: randomUUID(),
      description: opts.description ?? '',
      options: opts.options ?? null,
      config: opts.config ?? {},
      local: opts.local ?? false,
      seal_wrap: opts.seal_wrap ?? false,
      external_entropy_access: false,
      created_at: new Date(this.clock.now()).toISOString(),
      table: 'auth',
    };
    const instance = await module.create(this.env(mount, prefixed(this.barrier, `logical/${mount.uuid}/`)));
    this.setMounted([...this.mounted, { mount, routes: module.routes, module, instance, internal: false }]);
    await this.saveTable();
    return mount;
  }

  /** Disable an auth method: revoke its tokens, stop it, wipe its storage. Unknown path: nothing. */
  async disableAuth(path: string): Promise<void> {
    if (path.replace(/^\/+|\/+$/g, '') === 'token') throw invalid('token credential backend cannot be disabled');
    const mount = this.findAuthMount(path);
    const m = mount && this.mounted.find((x) => x.mount === mount && !x.internal);
    if (!m) return;
    await this.tokens.revokeByMount(m.mount.accessor);
    await m.instance.close?.();
    this.setMounted(this.mounted.filter((x) => x !== m));
    await this.saveTable();
    await deleteTree(this.barrier, `logical/${m.mount.uuid}/`);
  }

  /** Tune an auth mount (sys/auth/:path/tune, sys/mounts/auth/:path/tune). */
  async tuneAuth(path: string, changes: { description?: string; config?: Record<string, unknown>; options?: Record<string, string> }): Promise<void> {
    const mount = this.findAuthMount(path);
    if (!mount) throw invalid(`cannot fetch sysview for path "auth/${path.replace(/^\/*auth\//, '').replace(/\/*$/, '')}/"`);
    if (mount.path === 'auth/token/' && changes.config?.token_type !== undefined) throw invalid("tuning of 'token_type' is not allowed for the token auth method");
    if (changes.options && 'version' in changes.options) throw invalid(`auth method "${mount.type}" does not allow setting a version`);
    if (changes.description !== undefined) mount.description = changes.description;
    if (changes.config) mount.config = { ...mount.config, ...changes.config };
    if (changes.options) mount.options = { ...(mount.options ?? {}), ...changes.options };
    if (mount.path === 'auth/token/') await putJSON(this.barrier, 'core/token-mount', { accessor: mount.accessor, description: mount.description, config: mount.config });
    else await this.saveTable();
  }

  /** Issue the token of a login on an auth mount (CoreServices). */
  async issueLoginToken(mount: MountInfo, login: LoginAuth): Promise<IssuedLogin> {
    return issueLoginToken(this.tokens, this.identity, mount, login, this.loginMfa);
  }

  /** Mount an engine at `path`. */
  async mount(path: string, type: string, opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> } = {}): Promise<MountInfo> {
    const p = normalizeMountPath(path);
    const t = type === 'kv-v2' || type === 'kv-v1' ? 'kv' : type;
    let module = t === 'generic' ? (kvV1Engine as unknown as EngineModule) : ENGINES[t];
    if (!module) throw invalid('type', `unknown engine type "${type}"; supported: ${[...Object.keys(ENGINES), 'generic'].join(', ')}`);
    let options = opts.options ?? null;
    if (t === 'kv') {
      // Vault: `kv` without a version is KV version 1; kv-v1/kv-v2 name it (vault/mount.go).
      const version = String(options?.version ?? (type === 'kv-v2' ? '2' : '1'));
      if (version !== '1' && version !== '2') throw invalid('options.version', `invalid version provided: ${version}`);
      options = { ...(options ?? {}), version };
      module = version === '1' ? (kvV1Engine as unknown as EngineModule) : module;
    } else if (options && 'version' in options) throw invalid(`secrets engine "${t}" does not allow setting a version`);
    for (const m of this.mounted) {
      if (m.mount.path === p) throw invalid('path', `path is already in use at ${p}`);
      if (p.startsWith(m.mount.path) && !m.internal) throw invalid('path', `path is already in use at ${m.mount.path}`);
      if (m.mount.path.startsWith(p)) throw invalid('path', `path is already in use at ${m.mount.path}`);
    }
    if (p.startsWith('sys/') || p === 'sys/' || p.startsWith('auth/') || p.startsWith('cubbyhole/')) throw invalid('path', `cannot mount at reserved path ${p}`);
    const used = new Set(this.mounted.map((m) => m.mount.accessor));
    let accessor = accessorFor(module.accessorPrefix);
    while (used.has(accessor)) accessor = accessorFor(module.accessorPrefix);
    const mount: MountInfo = {
      path: p,
      type: t,
      accessor,
      uuid: randomUUID(),
      description: opts.description ?? '',
      options,
      config: opts.config ?? {},
      local: false,
      seal_wrap: false,
      external_entropy_access: false,
      created_at: new Date(this.clock.now()).toISOString(),
    };
    const instance = await module.create(this.env(mount, prefixed(this.barrier, `logical/${mount.uuid}/`)));
    this.setMounted([...this.mounted, { mount, routes: module.routes, module, instance, internal: false }]);
    await this.saveTable();
    return mount;
  }

  /** Unmount and delete all of a mount's data. */
  async unmount(path: string): Promise<void> {
    const p = normalizeMountPath(path);
    const m = this.mounted.find((x) => x.mount.path === p && !x.internal && x.mount.table !== 'auth');
    if (!m) return;
    await m.instance.close?.();
    this.setMounted(this.mounted.filter((x) => x !== m));
    await this.saveTable();
    await deleteTree(this.barrier, `logical/${m.mount.uuid}/`);
  }

  /** Update a mount's description/config (sys/mounts/:path/tune). */
  async tune(path: string, changes: { description?: string; config?: Record<string, unknown>; options?: Record<string, string> }): Promise<string[]> {
    const m = this.mounted.find((x) => x.mount.path === normalizeMountPath(path) && !x.internal);
    if (!m) throw invalid('path', `no mount at ${path}`);
    if (changes.description !== undefined) m.mount.description = changes.description;
    if (changes.config) m.mount.config = { ...m.mount.config, ...changes.config };
    let warnings: string[] = [];
    if (changes.options) {
      const next = { ...(m.mount.options ?? {}), ...changes.options };
      if (m.mount.type === 'kv' && changes.options.version !== undefined) {
        const from = m.mount.options?.version === '2' ? 2 : 1;
        const to = Number(changes.options.version);
        if (to !== 1 && to !== 2) throw invalid(`invalid version provided: ${changes.options.version}`);
        if (to < from) throw invalid(`cannot downgrade mount from version ${from}`);
        if (to === 2 && from === 1) warnings = await this.upgradeKv(m);
        next.version = String(to);
      } else if (m.mount.type !== 'kv' && 'version' in changes.options) throw invalid(`secrets engine "${m.mount.type}" does not allow setting a version`);
      m.mount.options = next;
    }
    await this.saveTable();
    return warnings;
  }

  /**
   * KV v1 -> v2 (vault-plugin-secrets-kv upgrade.go): every v1 key becomes version 1 of a v2 secret
   * with the same data, the v1 records are removed, and the mount is served by the v2 engine. keyhold
   * migrates within the tune request, so no request sees a half-upgraded mount.
   */
  private async upgradeKv(m: Mounted): Promise<string[]> {
    const v1 = m.instance as unknown as KvV1Backend;
    const storage = prefixed(this.barrier, `logical/${m.mount.uuid}/`);
    const mount = { ...m.mount, options: { ...(m.mount.options ?? {}), version: '2' } };
    const v2 = (await ENGINES.kv!.create(this.env(mount, storage))) as unknown as KvBackend;
    for await (const [path, data] of v1.entries()) await v2.writeData(path, data, undefined);
    await v1.clear();
    await m.instance.close?.();
    m.mount.options = mount.options;
    m.module = ENGINES.kv!;
    m.routes = ENGINES.kv!.routes;
    m.instance = v2 as unknown as Mounted['instance'];
    return ['Upgrading mount from version 1 to version 2. This mount will be unavailable for a brief period and will resume service shortly.'];
  }

  /** Recreate engine instances (sys/plugins/reload/backend) for mounts matching a path or type. */
  async reload(opts: { mounts?: string[]; plugin?: string }): Promise<string[]> {
    const out: string[] = [];
    const next: Mounted[] = [];
    for (const m of this.mounted) {
      const hit =
        !m.internal &&
        ((opts.plugin && (m.mount.type === opts.plugin || (opts.plugin === 'kv-v2' && m.mount.type === 'kv'))) ||
          opts.mounts?.some((x) => normalizeMountPath(x) === m.mount.path));
      if (!hit) {
        next.push(m);
        continue;
      }
      await m.instance.close?.();
      const instance = await m.module.create(this.env(m.mount, prefixed(this.barrier, `logical/${m.mount.uuid}/`)));
      next.push({ ...m, instance });
      out.push(m.mount.path);
    }
    this.setMounted(next);
    return out;
  }

  // ---- CoreServices / RouterCore ----

  resolve(path: string): MountedEngine | null {
    const withSlash = path.endsWith('/') ? path : path + '/';
    for (const m of this.mounted) if (withSlash.startsWith(m.mount.path)) return m;
    // Sealed: only sys answers (seal-status, unseal, init, health).
    if (!this.unsealed && (path.startsWith('sys/') || path === 'sys')) return this.sealedSys;
    return null;
  }

  private readonly sealedSys: MountedEngine = {
    mount: { path: 'sys/', type: 'system', accessor: 'system_internal', uuid: 'sys/', description: '', options: null, config: {}, local: false, seal_wrap: false, external_entropy_access: false },
    routes: sysEngine.routes,
    instance: this,
  };

  findMount(pathOrAccessor: string): MountInfo | undefined {
    const p = pathOrAccessor.endsWith('/') ? pathOrAccessor : pathOrAccessor + '/';
    return this.mounted.find((m) => !m.internal && (m.mount.path === p || m.mount.accessor === pathOrAccessor))?.mount;
  }
  engineOf<T>(mountPath: string): T | undefined {
    const p = normalizeMountPath(mountPath);
    return this.mounted.find((m) => m.mount.path === p)?.instance as T | undefined;
  }
  mounts(): MountInfo[] {
    return this.mounted.filter((m) => !m.internal && m.mount.table !== 'auth').map((m) => m.mount).sort((a, b) => a.path.localeCompare(b.path));
  }

  private aclKeyOf(policies: readonly string[]): string {
    let key = this.aclKeys.get(policies);
    if (key === undefined) this.aclKeys.set(policies, (key = policies.join(',')));
    return key;
  }

  /**
   * The ACL cache key of a token: its policy list, plus its identity when it has one (templated
   * policies, the default policy among them, resolve per entity).
   */
  private aclKeyFor(token: TokenInfo): string {
    const base = this.aclKeyOf(token.policies);
    return token.identity ? base + '\0' + identityKey(token.identity) : base;
  }

  /** The policies of a token, loaded (unknown names are skipped, as Vault does). */
  private async policiesOf(names: readonly string[]): Promise<Policy[]> {
    const ps: Policy[] = [];
    for (const n of names) {
      const p = await this.policies.get(n);
      if (p) ps.push(p);
    }
    return ps;
  }

  /** The compiled ACL of a token (cached by policy list and identity). */
  async aclOf(token: TokenInfo): Promise<ACL> {
    const key = this.aclKeyFor(token);
    let acl = this.aclCache.get(key);
    if (!acl) {
      acl = new ACL(await this.policiesOf(token.policies), token.identity, this.clock.now());
      // Per-entity ACLs (templated policies) could grow without end: start over when full.
      if (this.aclCache.size >= ACL_CACHE_MAX) this.aclCache.clear();
      this.aclCache.set(key, acl);
    }
    return acl;
  }

  /** The hot path's token lookup: answers only when no storage read or write is needed, else undefined. */
  cachedToken(id: string): TokenInfo | undefined {
    if (!this.unsealed) return undefined;
    const entry = this.tokens.cachedEntry(id);
    if (!entry || entry.num_uses > 0) return undefined;
    const info = tokenInfo(id, entry);
    if (entry.entity_id) {
      const identity = this.identity.cachedTokenIdentity(entry.entity_id);
      if (!identity) return undefined;
      info.identity = identity;
    }
    if (!info.root && !this.aclCache.has(this.aclKeyFor(info))) return undefined;
    return info;
  }

  /** Token lookup for the router; compiles and caches the ACL of its policy set. */
  async lookupToken(id: string, opts: { peek?: boolean } = {}): Promise<TokenInfo | null> {
    if (!this.unsealed) return null;
    let entry;
    try {
      entry = await this.tokens.lookup(id);
    } catch (e) {
      // A standby cannot revoke an expired token (the active will): it is simply not valid here.
      if ((e as Error)?.name === 'NotActiveError') return null;
      throw e;
    }
    if (!entry) return null;
    const info = tokenInfo(id, entry);
    // Login-issued tokens carry their entity: templated policies resolve against it.
    if (entry.entity_id) info.identity = (await this.identity.tokenIdentity(entry.entity_id)) ?? undefined;
    if (!info.root) await this.aclOf(info);
    // `peek`: an unauthenticated route looked at the token (audit, wrapping lookup) without using it,
    // as Vault's login path does not count a use.
    if (!opts.peek && entry.num_uses > 0 && this.standbyMode) {
      // Uses are counted by the active (one count for the cluster): the request goes there.
      info.mustForward = true;
    } else if (!opts.peek && entry.num_uses > 0) {
      // Spent under the token's lock on a fresh read: a request whose use could not be spent
      // (another request took the last one) is refused, however requests interleave.
      const spent = await this.tokens.spendUse(entry);
      if (spent === 'gone') return null;
      if (spent === 'last') info.lastUse = true;
    }
    return info;
  }

  /** After a request that spent a token's last use: revoke it (RouterCore hook). */
  async requestDone(token: TokenInfo): Promise<void> {
    if (!token.lastUse || !this.unsealed) return;
    const entry = await this.tokens.lookup(token.id, { includeSpent: true });
    if (entry) await this.tokens.revokeEntry(entry);
  }

  /** Drop compiled ACLs (after a policy change). */
  invalidateAcls(): void {
    this.aclCache.clear();
  }

  /** This node's HA status (sys/leader, sys/health). */
  haStatus(): HaStatus {
    return haStatusOf(this.cluster?.cluster ?? null, this);
  }

  /** Cluster nodes for sys/ha-status (none without HA). */
  async haNodes(): Promise<Array<Record<string, unknown>>> {
    return this.cluster ? this.cluster.cluster.nodes() : [];
  }

  /** sys/step-down: the active gives up the lock (a no-op without HA). */
  async stepDown(): Promise<void> {
    await this.cluster?.cluster.stepDown();
  }

  /** Capabilities of a token on a path (sys/capabilities-self). */
  async capabilities(token: TokenInfo, path: string): Promise<string[]> {
    if (token.root) return ['root'];
    if (token.policies.length === 0) return ['deny'];
    return (await this.aclOf(token)).capabilities(path);
  }

  /** The resultant ACL of a token (sys/internal/ui/resultant-acl). */
  async resultantAcl(token: TokenInfo): Promise<Record<string, unknown>> {
    if (token.root) return { root: true };
    return { ...(await this.aclOf(token)).resultant(), chroot_namespace: '' };
  }
}

/** "transit" / "/transit/" -> "transit/". */
export function normalizeMountPath(p: string): string {
  const s = p.replace(/^\/+/, '').replace(/\/+$/, '');
  if (s === '' || s.includes('..') || !/^[\w.\-/]+$/.test(s)) throw invalid('path', `invalid mount path "${p}"`);
  return s + '/';
}

async function deleteTree(s: Storage, prefix: string): Promise<void> {
  for (const name of await s.list(prefix)) {
    if (name.endsWith('/')) await deleteTree(s, prefix + name);
    else await s.delete(prefix + name);
  }
}

const ROOT_RESULT: AclResult = { allowed: true, rootPrivs: true };
const DENIED_RESULT: AclResult = { allowed: false, rootPrivs: false };

/** Compiled ACLs kept at most (policy sets times entities with templated policies). */
const ACL_CACHE_MAX = 10_000;

const identityKeys = new WeakMap<object, string>();

/** A stable key of an identity (templated ACLs are cached per entity and its current metadata). */
function identityKey(id: NonNullable<TokenInfo['identity']>): string {
  let k = identityKeys.get(id);
  if (k === undefined) identityKeys.set(id, (k = JSON.stringify(id)));
  return k;
}

export type { AclRequest };
