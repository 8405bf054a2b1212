/**
 * Both mount tables (core/mounts: secrets engines; core/auth: auth methods) and the live engine
 * instances serving them: mount, tune, unmount, enable and disable auth methods, reload, resolve a
 * request path to its mount, and the instances' life across unseal, seal, role changes and other
 * daemons' changes to shared storage.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, CoreServices, EngineEnv, EventBus, Logger, MountInfo } from '../../framework/context.js';
import type { EngineModule } from '../../framework/engine.js';
import { conflict, invalid } from '../../framework/errors.js';
import { AUTH_METHODS, ENGINES } from '../../engines/registry.js';
import { kvV1Engine, type KvV1Engine } from '../../engines/kv/kv-v1.js';
import type { KvEngine } from '../../engines/kv/kv-engine.js';
import type { MountChanges, SysMounts } from '../../engines/sys/sys-parts.js';
import { syncEngine } from '../../sync/index.js';
import type { TokenStore } from '../../auth/tokens.js';
import { getJSON, prefixed, putJSON, type Storage } from '../../storage/backend.js';
import type { InternalModules, RoleView, SealView } from '../contracts.js';
import type { MountedEngine } from '../router.js';
import { INTERNAL_PREFIX, accessorFor, normalizeMountPath, storagePrefixOf } from './mount-paths.js';

/** One live mount: its table entry, module and instance. */
interface Mounted extends MountedEngine {
  module: EngineModule;
  instance: { close?(): Promise<void>; invalidate?(key: string): void | Promise<void> };
  /** Internal mounts (sys, auth/token, sys/sync, identity, cubbyhole) are not listed or unmountable. */
  internal: boolean;
  /** The instance is a bag of the core's own parts (sys, token): never closed, recreated or invalidated by itself. */
  ofCore: boolean;
}

const MOUNTS_KEY = 'core/mounts';
/** Auth methods live in their own table, as Vault keeps core/auth apart from core/mounts. */
const AUTH_KEY = 'core/auth';

/** The barrier paths of both mount tables (a change there reloads the table). */
export const MOUNT_TABLE_KEYS: readonly string[] = [MOUNTS_KEY, AUTH_KEY];

/** The module serving a mount-table entry (auth methods by type from their own registry). */
function moduleOf(m: MountInfo): EngineModule | undefined {
  if (m.table === 'auth') return AUTH_METHODS[m.type];
  // KV version 1 (and the legacy "generic" type) is its own module; `kv` with version 2 the versioned one.
  if (m.type === 'generic' || (m.type === 'kv' && m.options?.version !== '2'))
    return kvV1Engine as unknown as EngineModule;
  return ENGINES[m.type];
}

async function deleteTree(s: Storage, prefix: string): Promise<void> {
  for (const name of await s.list(prefix)) {
    if (name.endsWith('/')) await deleteTree(s, prefix + name);
    else await s.delete(prefix + name);
  }
}

/** What the mount table is built from. */
export interface MountTableDeps {
  /** The barrier (every mount's storage is a prefix of it). */
  barrier: Storage;
  clock: Clock;
  logger: Logger;
  events: EventBus;
  /** What engines may ask of the core (EngineEnv.core). */
  services: CoreServices;
  tokens: Pick<TokenStore, 'revokeByMount'>;
  seal: SealView;
  role: RoleView;
  /** The internal mounts' modules (the core builds them once its parts exist). */
  internalModules(): InternalModules;
}

/** The mount tables and engine instances of one daemon. */
export class MountTable implements SysMounts {
  private mounted: Mounted[] = [];
  private readonly recreating = new Set<string>();
  private sealedSysMount: MountedEngine | null = null;

  constructor(private readonly deps: MountTableDeps) {}

  // ---- lifecycle (unseal, seal, role changes, other daemons' changes) ----

  /** Create every instance: the internal mounts, then both tables' entries (at unseal). */
  async load(): Promise<void> {
    const table = await this.readTables();
    const mounted: Mounted[] = [];
    const modules = this.deps.internalModules();
    const internal = async (module: EngineModule, path: string, ofCore: boolean) => {
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
      const instance = await module.create(this.env(mount, prefixed(this.deps.barrier, INTERNAL_PREFIX[path]!)));
      mounted.push({ mount, routes: module.routes, module, instance, internal: true, ofCore });
    };
    await internal(modules.sys, 'sys/', true);
    await internal(modules.token, 'auth/token/', true);
    await internal(syncEngine, 'sys/sync/', false);
    await internal(modules.identity, 'identity/', false);
    if (modules.mfa) {
      await internal(modules.mfa.identity, 'identity/mfa/', false);
      await internal(modules.mfa.sys, 'sys/mfa/', false);
    }
    // The token mount's accessor is stable per install (auth_token_<8 hex>, Vault's default token mount).
    const tokenMount = mounted.find((m) => m.mount.path === 'auth/token/')!.mount;
    const stored = await this.tokenMountRecord();
    tokenMount.accessor = stored.accessor;
    if (stored.description !== undefined) tokenMount.description = stored.description;
    if (stored.config) tokenMount.config = stored.config;
    tokenMount.table = 'auth';
    await internal(modules.cubbyhole, 'cubbyhole/', false);
    for (const m of table) {
      const module = moduleOf(m);
      if (!module) {
        this.deps.logger.error('unknown engine type in mount table', { path: m.path, type: m.type });
        continue;
      }
      const instance = await module.create(this.env(m, prefixed(this.deps.barrier, `logical/${m.uuid}/`)));
      mounted.push({ mount: m, routes: module.routes, module, instance, internal: false, ofCore: false });
    }
    this.setMounted(mounted);
  }

  /** Recreate every instance (role change, or changes possibly missed); the old ones are closed after. */
  async restart(): Promise<void> {
    const old = this.mounted;
    await this.load();
    for (const m of old) if (!m.ofCore) await m.instance.close?.().catch(() => {});
  }

  /** Close every instance and forget them (seal; `ignoreErrors` when an unseal is being undone). */
  async closeAll(opts: { ignoreErrors?: boolean } = {}): Promise<void> {
    for (const m of this.mounted) {
      if (m.ofCore) continue;
      if (opts.ignoreErrors) await m.instance.close?.().catch(() => {});
      else await m.instance.close?.();
    }
    this.mounted = [];
  }

  /** Re-read the mount table: start new mounts, stop removed ones, take over changed descriptions. */
  async reloadTable(): Promise<void> {
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
      const instance = await module.create(this.env(m, prefixed(this.deps.barrier, `logical/${m.uuid}/`)));
      next.push({ mount: m, routes: module.routes, module, instance, internal: false, ofCore: false });
    }
    this.setMounted(next);
  }

  /**
   * Another daemon changed the engine record at `key` (a barrier path): the owning engine's optional
   * `invalidate(key)` gets the key relative to its mount's storage; an engine without it is recreated.
   */
  async invalidate(key: string): Promise<void> {
    // Longest storage prefix first (sys/sync/ before sys/).
    const owners = this.mounted.filter((m) => !m.ofCore && key.startsWith(storagePrefixOf(m)));
    owners.sort((a, b) => storagePrefixOf(b).length - storagePrefixOf(a).length);
    const owner = owners[0];
    if (!owner) return;
    if (owner.instance.invalidate) await owner.instance.invalidate(key.slice(storagePrefixOf(owner).length));
    // An engine that cannot invalidate selectively (sync's caches) is recreated, once per burst.
    else this.recreateSoon(owner);
  }

  /** Recreate one mount's instance shortly (coalesces a burst of changes into one reload). */
  private recreateSoon(m: Mounted): void {
    const path = m.mount.path;
    if (this.recreating.has(path)) return;
    this.recreating.add(path);
    setTimeout(() => {
      this.recreating.delete(path);
      void this.recreate(path).catch((e: unknown) =>
        this.deps.logger.error('reloading a mount after a change failed', { path, error: (e as Error)?.message }),
      );
    }, 20).unref();
  }

  private async recreate(path: string): Promise<void> {
    const m = this.mounted.find((x) => x.mount.path === path);
    if (!m || this.deps.seal.isSealed() || m.ofCore) return;
    const instance = await m.module.create(this.env(m.mount, prefixed(this.deps.barrier, storagePrefixOf(m))));
    const cur = this.mounted.find((x) => x.mount.path === path);
    if (cur !== m) {
      await (instance as { close?(): Promise<void> }).close?.();
      return;
    }
    this.setMounted(this.mounted.map((x) => (x === m ? { ...m, instance } : x)));
    await m.instance.close?.();
  }

  // ---- lookups (router, engines, sys routes) ----

  /** The mount serving a request path; sealed, only sys answers (seal-status, unseal, init, health). */
  resolve(path: string): MountedEngine | null {
    const withSlash = path.endsWith('/') ? path : path + '/';
    for (const m of this.mounted) if (withSlash.startsWith(m.mount.path)) return m;
    if (this.deps.seal.isSealed() && (path.startsWith('sys/') || path === 'sys')) return this.sealedSys();
    return null;
  }

  private sealedSys(): MountedEngine {
    const { sys, sysParts } = this.deps.internalModules();
    this.sealedSysMount ??= {
      mount: {
        path: 'sys/',
        type: 'system',
        accessor: 'system_internal',
        uuid: 'sys/',
        description: '',
        options: null,
        config: {},
        local: false,
        seal_wrap: false,
        external_entropy_access: false,
      },
      routes: sys.routes,
      instance: sysParts,
    };
    return this.sealedSysMount;
  }

  findMount(pathOrAccessor: string): MountInfo | undefined {
    const p = pathOrAccessor.endsWith('/') ? pathOrAccessor : pathOrAccessor + '/';
    return this.mounted.find((m) => !m.internal && (m.mount.path === p || m.mount.accessor === pathOrAccessor))?.mount;
  }

  engineOf<T>(mountPath: string): T | undefined {
    const p = normalizeMountPath(mountPath);
    return this.mounted.find((m) => m.mount.path === p)?.instance as T | undefined;
  }

  /** Secrets engine mounts (not auth methods, not internal mounts), by path. */
  list(): MountInfo[] {
    return this.mounted
      .filter((m) => !m.internal && m.mount.table !== 'auth')
      .map((m) => m.mount)
      .sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Auth mounts, the token mount first (sys/auth). */
  authMounts(): MountInfo[] {
    return this.mounted
      .filter((m) => m.mount.table === 'auth')
      .map((m) => m.mount)
      .sort((a, b) => a.path.localeCompare(b.path));
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

  // ---- secrets engines (sys/mounts) ----

  /** Mount an engine at `path`. */
  async mount(
    path: string,
    type: string,
    opts: { description?: string; options?: Record<string, string> | null; config?: Record<string, unknown> } = {},
  ): Promise<MountInfo> {
    const p = normalizeMountPath(path);
    const t = type === 'kv-v2' || type === 'kv-v1' ? 'kv' : type;
    let module = t === 'generic' ? (kvV1Engine as unknown as EngineModule) : ENGINES[t];
    if (!module)
      throw invalid(
        'type',
        `unknown engine type "${type}"; supported: ${[...Object.keys(ENGINES), 'generic'].join(', ')}`,
      );
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
    if (p.startsWith('sys/') || p === 'sys/' || p.startsWith('auth/') || p.startsWith('cubbyhole/'))
      throw invalid('path', `cannot mount at reserved path ${p}`);
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
      created_at: new Date(this.deps.clock.now()).toISOString(),
    };
    const instance = await module.create(this.env(mount, prefixed(this.deps.barrier, `logical/${mount.uuid}/`)));
    this.setMounted([
      ...this.mounted,
      { mount, routes: module.routes, module, instance, internal: false, ofCore: false },
    ]);
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
    await deleteTree(this.deps.barrier, `logical/${m.mount.uuid}/`);
  }

  /** Every mount path, secrets and auth, internal ones included (sys/remount's conflict check). */
  allMountPaths(): string[] {
    return this.mounted.map((m) => m.mount.path);
  }

  /**
   * Move a mount (sys/remount; checked by engines/sys/remount.ts): the table entry takes the new
   * path; its records stay under its uuid, so nothing else moves.
   */
  async moveMount(from: string, to: string): Promise<MountInfo> {
    const m = this.mounted.find((x) => x.mount.path === from && !x.internal);
    if (!m) throw invalid('from', `no matching mount at "${from}"`);
    m.mount.path = to;
    this.setMounted([...this.mounted]);
    try {
      await this.saveTable();
    } catch (e) {
      m.mount.path = from;
      this.setMounted([...this.mounted]);
      throw e;
    }
    return m.mount;
  }

  /** Update a mount's description/config (sys/mounts/:path/tune). */
  async tune(path: string, changes: MountChanges): Promise<string[]> {
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
      } else if (m.mount.type !== 'kv' && 'version' in changes.options)
        throw invalid(`secrets engine "${m.mount.type}" does not allow setting a version`);
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
    const v1 = m.instance as unknown as KvV1Engine;
    const storage = prefixed(this.deps.barrier, `logical/${m.mount.uuid}/`);
    const mount = { ...m.mount, options: { ...(m.mount.options ?? {}), version: '2' } };
    const v2 = (await ENGINES.kv!.create(this.env(mount, storage))) as unknown as KvEngine;
    for await (const [path, data] of v1.entries()) await v2.writeData(path, data, undefined);
    await v1.clear();
    await m.instance.close?.();
    m.mount.options = mount.options;
    m.module = ENGINES.kv!;
    m.routes = ENGINES.kv!.routes;
    m.instance = v2 as unknown as Mounted['instance'];
    return [
      'Upgrading mount from version 1 to version 2. This mount will be unavailable for a brief period and will resume service shortly.',
    ];
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
      const instance = await m.module.create(
        this.env(m.mount, prefixed(this.deps.barrier, `logical/${m.mount.uuid}/`)),
      );
      next.push({ ...m, instance });
      out.push(m.mount.path);
    }
    this.setMounted(next);
    return out;
  }

  // ---- auth methods (sys/auth) ----

  /** Enable an auth method at auth/<path>/ (sys/auth/:path). */
  async enableAuth(
    path: string,
    type: string,
    opts: {
      description?: string;
      options?: Record<string, string> | null;
      config?: Record<string, unknown>;
      local?: boolean;
      seal_wrap?: boolean;
    },
  ): Promise<MountInfo> {
    if (type === '') throw invalid('backend type must be specified as a string');
    if (type === 'token') throw invalid('token credential backend cannot be instantiated');
    const module = AUTH_METHODS[type];
    if (!module)
      throw invalid(`unknown auth method type "${type}"; supported: ${Object.keys(AUTH_METHODS).join(', ')}`);
    if (opts.options && 'version' in opts.options)
      throw invalid(`auth method "${type}" does not allow setting a version`);
    const p = 'auth/' + normalizeMountPath(path);
    for (const m of this.mounted) {
      if (m.mount.path === p || p.startsWith(m.mount.path) || m.mount.path.startsWith(p))
        throw conflict(`path is already in use at ${p.slice(5)}`);
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
      created_at: new Date(this.deps.clock.now()).toISOString(),
      table: 'auth',
    };
    const instance = await module.create(this.env(mount, prefixed(this.deps.barrier, `logical/${mount.uuid}/`)));
    this.setMounted([
      ...this.mounted,
      { mount, routes: module.routes, module, instance, internal: false, ofCore: false },
    ]);
    await this.saveTable();
    return mount;
  }

  /** Disable an auth method: revoke its tokens, stop it, wipe its storage. Unknown path: nothing. */
  async disableAuth(path: string): Promise<void> {
    if (path.replace(/^\/+|\/+$/g, '') === 'token') throw invalid('token credential backend cannot be disabled');
    const mount = this.findAuthMount(path);
    const m = mount && this.mounted.find((x) => x.mount === mount && !x.internal);
    if (!m) return;
    await this.deps.tokens.revokeByMount(m.mount.accessor);
    await m.instance.close?.();
    this.setMounted(this.mounted.filter((x) => x !== m));
    await this.saveTable();
    await deleteTree(this.deps.barrier, `logical/${m.mount.uuid}/`);
  }

  /** Tune an auth mount (sys/auth/:path/tune, sys/mounts/auth/:path/tune). */
  async tuneAuth(path: string, changes: MountChanges): Promise<void> {
    const mount = this.findAuthMount(path);
    if (!mount)
      throw invalid(`cannot fetch sysview for path "auth/${path.replace(/^\/*auth\//, '').replace(/\/*$/, '')}/"`);
    if (mount.path === 'auth/token/' && changes.config?.token_type !== undefined)
      throw invalid("tuning of 'token_type' is not allowed for the token auth method");
    if (changes.options && 'version' in changes.options)
      throw invalid(`auth method "${mount.type}" does not allow setting a version`);
    if (changes.description !== undefined) mount.description = changes.description;
    if (changes.config) mount.config = { ...mount.config, ...changes.config };
    if (changes.options) mount.options = { ...(mount.options ?? {}), ...changes.options };
    if (mount.path === 'auth/token/')
      await putJSON(this.deps.barrier, 'core/token-mount', {
        accessor: mount.accessor,
        description: mount.description,
        config: mount.config,
      });
    else await this.saveTable();
  }

  // ---- storage of the tables ----

  private env(mount: MountInfo, storage: Storage): EngineEnv {
    const { clock, logger, events, services } = this.deps;
    return { storage, mount, clock, logger, events, core: services, standby: this.deps.role.isStandby() };
  }

  /** Both mount tables; auth entries marked `table: "auth"`. */
  private async readTables(): Promise<MountInfo[]> {
    const mounts = (await getJSON<MountInfo[]>(this.deps.barrier, MOUNTS_KEY)) ?? [];
    const auth = (await getJSON<MountInfo[]>(this.deps.barrier, AUTH_KEY)) ?? [];
    return [...mounts, ...auth.map((m) => ({ ...m, table: 'auth' as const }))];
  }

  private setMounted(list: Mounted[]): void {
    // Longest path first so `sys/sync/` wins over `sys/`.
    this.mounted = list.sort((a, b) => b.mount.path.length - a.mount.path.length);
  }

  private async saveTable(): Promise<void> {
    const own = this.mounted.filter((m) => !m.internal);
    await putJSON(
      this.deps.barrier,
      MOUNTS_KEY,
      own.filter((m) => m.mount.table !== 'auth').map((m) => m.mount),
    );
    await putJSON(
      this.deps.barrier,
      AUTH_KEY,
      own.filter((m) => m.mount.table === 'auth').map((m) => m.mount),
    );
  }

  private async tokenMountRecord(): Promise<{
    accessor: string;
    description?: string;
    config?: Record<string, unknown>;
  }> {
    const stored = await getJSON<{ accessor: string; description?: string; config?: Record<string, unknown> }>(
      this.deps.barrier,
      'core/token-mount',
    );
    if (stored) return stored;
    const rec = { accessor: accessorFor('auth_token') };
    await putJSON(this.deps.barrier, 'core/token-mount', rec);
    return rec;
  }
}
