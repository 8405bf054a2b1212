/**
 * The core: seal state, barrier, mount table, tokens and policies, engine instances.
 * It implements what the router needs (RouterCore) and what engines may ask (CoreServices).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ACL } from '../auth/acl.js';
import { PolicyStore } from '../auth/policies.js';
import { TokenStore, tokenInfo } from '../auth/tokens.js';
import type { Clock, CoreServices, EngineEnv, EventBus, Logger, MountInfo, TokenInfo } from '../framework/context.js';
import type { EngineModule } from '../framework/engine.js';
import { invalid } from '../framework/errors.js';
import { LocalEventBus } from '../framework/events.js';
import { ENGINES } from '../engines/registry.js';
import { sysEngine } from '../engines/sys/index.js';
import { tokenEngine } from '../engines/sys/token-routes.js';
import { syncEngine } from '../sync/index.js';
import { Barrier } from '../storage/barrier.js';
import { getJSON, prefixed, putJSON, type Backend, type Storage } from '../storage/backend.js';
import { NoKeychain, type Keychain } from '../seal/keychain.js';
import { attachAudit } from '../audit/audit-broker.js';
import { initializeStorage, masterFromRecoveryKey, openKeyring, readSealConfig, recoveryKeyOf, type SealConfig } from '../seal/seal.js';
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
const INTERNAL_PREFIX: Record<string, string> = { 'sys/': 'sys/', 'auth/token/': 'sys/token-engine/', 'sys/sync/': 'sys/sync/' };

const MOUNTS_KEY = 'core/mounts';

function accessorFor(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}

/** Result of `sys/init`. */
export interface InitResult {
  recoveryKey: string;
  rootToken: string;
  keychain: boolean;
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
  readonly tokens: TokenStore;
  readonly policies: PolicyStore;
  audit?: AuditHook;
  /** Set on a cluster node (HA storage): the router's forwarding decisions. */
  cluster?: ClusterRouting;
  sealConfig: SealConfig | null = null;
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
    this.barrier = new Barrier(opts.backend);
    this.keychain = opts.keychain;
    this.logger = opts.logger;
    this.clock = opts.clock ?? { now: () => Date.now() };
    this.events = new LocalEventBus((e) => this.logger.error('event listener failed', { error: (e as Error)?.message }));
    this.maxRequestSize = opts.maxRequestSize;
    this.version = opts.version;
    this.standbyMode = opts.standby ?? false;
    this.tokens = new TokenStore(prefixed(this.barrier, 'sys/token/'), this.clock);
    this.policies = new PolicyStore(prefixed(this.barrier, 'sys/'));
    this.audit = attachAudit(this);
    this.authorizer = {
      allowed: (token, cap, path) => {
        if (token.root) return true;
        const acl = this.aclCache.get(this.aclKeyOf(token.policies));
        return acl ? acl.allowed(cap, path) : false;
      },
    };
  }

  /** Read seal config; unseal from the keychain when it holds our master key. */
  async start(): Promise<void> {
    this.sealConfig = await readSealConfig(this.backend);
    if (!this.sealConfig?.keychain_account) return;
    try {
      const master = await this.keychain.get(this.sealConfig.keychain_account);
      if (master) await this.unseal(master);
      else this.logger.warn('keychain has no master key for this storage; waiting for operator unseal');
    } catch (e) {
      this.logger.warn('keychain unavailable; waiting for operator unseal', { reason: (e as Error).message });
    }
  }

  /** Re-read the seal config from storage (another node of a cluster may have initialised it). */
  async refreshSealConfig(): Promise<boolean> {
    if (this.sealConfig) return true;
    const found = await readSealConfig(this.backend);
    if (!found) return false;
    // Initialised by another node since this one started: unseal from our keychain if it has the key.
    await this.start();
    return this.sealConfig !== null;
  }

  isInitialized(): boolean {
    return this.sealConfig !== null;
  }
  isSealed(): boolean {
    return !this.unsealed;
  }

  /** Initialise storage: master key (to keychain when possible), root token, recovery key. */
  async init(opts: { useKeychain: boolean; rootTokenId?: string }): Promise<InitResult> {
    if (await readSealConfig(this.backend)) throw invalid('Vault is already initialized');
    for (const h of this.beforeInit) await h();
    let account: string | null = null;
    if (opts.useKeychain) account = `storage-${randomUUID()}`;
    const { master, config } = await initializeStorage(this.backend, account);
    let keychain = false;
    if (account) {
      try {
        await this.keychain.set(account, master);
        keychain = true;
      } catch (e) {
        this.logger.warn('could not store master key in keychain; use the recovery key to unseal', { reason: (e as Error).message });
        config.keychain_account = null;
        await this.backend.put('core/seal-config', Buffer.from(JSON.stringify(config)));
      }
    }
    this.sealConfig = config;
    await this.unseal(master);
    const root = await this.tokens.create({ policies: ['root'], display_name: 'root', id: opts.rootTokenId, orphan: true });
    return { recoveryKey: recoveryKeyOf(master), rootToken: root.id, keychain };
  }

  /** Unseal with a master key (from keychain or recovery key). */
  async unseal(master: Buffer): Promise<void> {
    if (this.unsealed) return;
    // Concurrent unseal calls (keychain at start, operator unseal) share one attempt.
    this.unsealing ??= this.doUnseal(master).finally(() => (this.unsealing = null));
    return this.unsealing;
  }

  private unsealing: Promise<void> | null = null;
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
    for (const h of this.afterUnseal) await h();
    this.logger.info('unsealed');
  }

  /**
   * Another process changed the record at `key` (a barrier path) in shared storage: drop what this
   * daemon cached of it. Mount table, policies and tokens are handled here; engine records go to the
   * engine's optional `invalidate(key)` with the key relative to its mount's storage.
   */
  async invalidate(key: string): Promise<void> {
    if (!this.unsealed) return;
    // '' = changes may have been missed (the feed reconnected): every cache starts over.
    if (key === '') return this.reloadAll();
    if (key === MOUNTS_KEY) return this.reloadMountTable();
    if (key.startsWith('sys/policy/')) {
      this.policies.forget(key.slice('sys/policy/'.length));
      this.aclCache.clear();
      return;
    }
    if (key.startsWith('sys/token/id/')) {
      this.tokens.forget(key.slice('sys/token/id/'.length));
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
    await this.reloadAll();
  }

  /** Re-read the mount table: start new mounts, stop removed ones, take over changed descriptions. */
  private async reloadMountTable(): Promise<void> {
    const table = (await getJSON<MountInfo[]>(this.barrier, MOUNTS_KEY)) ?? [];
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
      const module = ENGINES[m.type];
      if (!module) continue;
      const instance = await module.create(this.env(m, prefixed(this.barrier, `logical/${m.uuid}/`)));
      next.push({ mount: m, routes: module.routes, module, instance, internal: false });
    }
    this.setMounted(next);
  }

  /** Unseal from recovery-key text. */
  async unsealWithRecoveryKey(text: string): Promise<void> {
    let master: Buffer;
    try {
      master = masterFromRecoveryKey(text);
    } catch (e) {
      throw invalid('key', (e as Error).message);
    }
    try {
      await openKeyring(this.backend, master);
    } catch (e) {
      throw invalid('key', (e as Error).message);
    }
    await this.unseal(master);
    await this.rememberInKeychain(master);
  }

  /**
   * Shared storage (a cluster): a node unsealed with the recovery key keeps the master key in its
   * own OS keychain under the storage's account, so it unseals itself at its next start, as the
   * node that ran init does. Best effort: without a keychain the node waits for `operator unseal`.
   */
  private async rememberInKeychain(master: Buffer): Promise<void> {
    const account = this.sealConfig?.keychain_account;
    if (!account || !this.cluster || this.keychain instanceof NoKeychain) return;
    try {
      if (await this.keychain.get(account)) return;
      await this.keychain.set(account, master);
      this.logger.info('master key stored in this node\'s keychain: it unseals itself at the next start');
    } catch (e) {
      this.logger.warn('could not store the master key in this node\'s keychain; unseal after each start', { reason: (e as Error).message });
    }
  }

  /** Seal: stop engines, forget keys. */
  async seal(): Promise<void> {
    if (!this.unsealed) return;
    this.unwatch?.();
    this.unwatch = null;
    for (const h of this.beforeSeal) await h();
    for (const m of this.mounted) if ((m.instance as unknown) !== this) await m.instance.close?.();
    this.mounted = [];
    this.unsealed = false;
    this.tokens.clear();
    this.policies.clear();
    this.aclCache.clear();
    this.barrier.seal();
    this.logger.info('sealed');
  }

  /** Stop everything and close storage. */
  async close(): Promise<void> {
    await this.seal();
    await this.backend.close();
  }

  // ---- mounts ----

  private env(mount: MountInfo, storage: Storage): EngineEnv {
    return { storage, mount, clock: this.clock, logger: this.logger, events: this.events, core: this, standby: this.standbyMode };
  }

  private async loadMounts(): Promise<void> {
    const table = (await getJSON<MountInfo[]>(this.barrier, MOUNTS_KEY)) ?? [];
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
    for (const m of table) {
      const module = ENGINES[m.type];
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
    await putJSON(
      this.barrier,
      MOUNTS_KEY,
      this.mounted.filter((m) => !m.internal).map((m) => m.mount),
    );
  }

  /** Mount an engine at `path`. */
  async mount(path: string, type: string, opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> } = {}): Promise<MountInfo> {
    const p = normalizeMountPath(path);
    const t = type === 'kv-v2' ? 'kv' : type;
    const module = ENGINES[t];
    if (!module) throw invalid('type', `unknown engine type "${type}"; supported: ${Object.keys(ENGINES).join(', ')}`);
    let options = opts.options ?? null;
    if (t === 'kv') {
      const version = String(options?.version ?? (type === 'kv-v2' ? '2' : '1'));
      if (version !== '2') throw invalid('options.version', 'only KV version 2 is supported; set options.version to "2"');
      options = { ...(options ?? {}), version: '2' };
    }
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
    const m = this.mounted.find((x) => x.mount.path === p && !x.internal);
    if (!m) return;
    await m.instance.close?.();
    this.setMounted(this.mounted.filter((x) => x !== m));
    await this.saveTable();
    await deleteTree(this.barrier, `logical/${m.mount.uuid}/`);
  }

  /** Update a mount's description/config (sys/mounts/:path/tune). */
  async tune(path: string, changes: { description?: string; config?: Record<string, unknown>; options?: Record<string, string> }): Promise<void> {
    const m = this.mounted.find((x) => x.mount.path === normalizeMountPath(path) && !x.internal);
    if (!m) throw invalid('path', `no mount at ${path}`);
    if (changes.description !== undefined) m.mount.description = changes.description;
    if (changes.config) m.mount.config = { ...m.mount.config, ...changes.config };
    if (changes.options) m.mount.options = { ...(m.mount.options ?? {}), ...changes.options, ...(m.mount.type === 'kv' ? { version: '2' } : {}) };
    await this.saveTable();
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
    return this.mounted.filter((m) => !m.internal).map((m) => m.mount).sort((a, b) => a.path.localeCompare(b.path));
  }

  private aclKeyOf(policies: readonly string[]): string {
    let key = this.aclKeys.get(policies);
    if (key === undefined) this.aclKeys.set(policies, (key = policies.join(',')));
    return key;
  }

  /** The hot path's token lookup: answers only when no storage read or write is needed, else undefined. */
  cachedToken(id: string): TokenInfo | undefined {
    if (!this.unsealed) return undefined;
    const entry = this.tokens.cachedEntry(id);
    if (!entry || entry.num_uses > 0) return undefined;
    const info = tokenInfo(id, entry);
    if (!info.root && !this.aclCache.has(this.aclKeyOf(info.policies))) return undefined;
    return info;
  }

  /** Token lookup for the router; compiles and caches the ACL of its policy set. */
  async lookupToken(id: string): Promise<TokenInfo | null> {
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

    if (!info.root) {
      const key = this.aclKeyOf(info.policies);
      if (!this.aclCache.has(key)) {
        const ps = [];
        for (const n of info.policies) {
          const p = await this.policies.get(n);
          if (p) ps.push(p);
        }
        this.aclCache.set(key, new ACL(ps));
      }
    }
    if (entry.num_uses > 0 && this.standbyMode) {
      // Uses are counted by the active (one count for the cluster): the request goes there.
      info.mustForward = true;
    } else if (entry.num_uses > 0 && (await this.tokens.use(entry))) info.lastUse = true;
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
    const ps = [];
    for (const n of token.policies) {
      const p = await this.policies.get(n);
      if (p) ps.push(p);
    }
    return new ACL(ps).capabilities(path);
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
