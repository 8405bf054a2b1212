/** The `sys/` routes: seal and init, health, mounts, ACL policies, plugin reload, capabilities. */
import type { EngineModule } from '../../framework/engine.js';
import { invalid, notFound } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo } from '../../framework/context.js';
import type { SysCore } from './sys-core.js';
import { auditRoutes } from './audit-routes.js';
import { openapiRoute } from './openapi-route.js';
import { uiMountsRoutes } from './ui-mounts-route.js';
import { haRoutes } from './ha-routes.js';

const route = routesFor<SysCore>();

function sealStatus(core: SysCore): Record<string, unknown> {
  return {
    type: 'shamir',
    initialized: core.isInitialized(),
    sealed: core.isSealed(),
    t: 1,
    n: 1,
    progress: 0,
    nonce: '',
    version: core.version,
    build_date: '',
    migration: false,
    recovery_seal: false,
    storage_type: core.backend.describe().split(':')[0],
    cluster_name: 'keyhold',
    cluster_id: core.sealConfig?.storage_id ?? '',
    keychain: core.keychain.describe(),
    keychain_unseal: Boolean(core.sealConfig?.keychain_account),
  };
}

/** Seconds from a stored TTL ("1h", "3600", 3600); 0 when unset or unreadable. */
function ttlSeconds(v: unknown): number {
  if (v === undefined || v === null || v === '') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}

/** A mount's config as Vault renders it: TTLs as integer seconds and only the keys Vault knows (clients decode ints). */
function mountConfigView(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    default_lease_ttl: ttlSeconds(c.default_lease_ttl),
    max_lease_ttl: ttlSeconds(c.max_lease_ttl),
    force_no_cache: c.force_no_cache === true || c.force_no_cache === 'true',
  };
  if (typeof c.listing_visibility === 'string' && c.listing_visibility !== '') out.listing_visibility = c.listing_visibility;
  return out;
}

/** Validate a mount's config at write time: TTLs to seconds (400 naming the key), unknown keys dropped. */
function normalizeMountConfig(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['default_lease_ttl', 'max_lease_ttl'] as const) if (c[k] !== undefined && c[k] !== '') out[k] = parseDuration(`config.${k}`, c[k]);
  if (c.force_no_cache !== undefined) out.force_no_cache = c.force_no_cache === true || c.force_no_cache === 'true';
  if (typeof c.listing_visibility === 'string') out.listing_visibility = c.listing_visibility;
  return out;
}

function mountView(m: MountInfo): Record<string, unknown> {
  return {
    accessor: m.accessor,
    config: mountConfigView(m.config),
    description: m.description,
    external_entropy_access: false,
    local: false,
    options: m.options,
    plugin_version: '',
    running_plugin_version: '',
    running_sha256: '',
    seal_wrap: false,
    type: m.type,
    uuid: m.uuid,
  };
}

const policyName = f.name('Policy name');

/** A bare JSON answer without the envelope (Vault's seal-status, health, init, unseal, leader). */
function rawJson(body: unknown, status = 200) {
  return { raw: { contentType: 'application/json', body: JSON.stringify(body) + '\n', status } };
}

/** Routes of the sys mount. */
export const sysRoutes: AnyRoute[] = [
  openapiRoute,
  route({
    path: 'seal-status',
    standby: 'local', // every cluster node answers for itself (cluster-wire.md §2.3)
    summary: 'Seal status, version and storage',
    fields: {},
    unauthenticated: true,
    allowSealed: true,
    // Vault answers seal-status with a bare JSON object (no envelope); clients read `sealed` at the top.
    operations: { read: ({ engine }) => rawJson(sealStatus(engine)) },
  }),
  ...haRoutes,
  route({
    path: 'init',
    standby: 'local', // every cluster node answers for itself (cluster-wire.md §2.3)
    summary: 'Initialise storage: master key to the OS keychain, recovery key and root token returned once',
    fields: {
      secret_shares: f.int('Accepted for Vault compatibility; keyhold issues one recovery key').default(1),
      secret_threshold: f.int('Accepted for Vault compatibility').default(1),
      keychain: f.bool('Store the master key in the OS keychain so the daemon unseals at start').default(true),
    },
    unauthenticated: true,
    allowSealed: true,
    operations: {
      read: ({ engine }) => rawJson({ initialized: engine.isInitialized() }),
      update: async ({ engine, data }) => {
        if (engine.isInitialized()) throw invalid('Vault is already initialized');
        const r = await engine.init({ useKeychain: data.keychain });
        const body = { keys: [r.recoveryKey], keys_base64: [r.recoveryKey], recovery_keys: [], root_token: r.rootToken, keychain: r.keychain };
        return rawJson(body);
      },
    },
  }),
  route({
    path: 'unseal',
    standby: 'local', // every cluster node answers for itself (cluster-wire.md §2.3)
    summary: 'Unseal with the recovery key',
    fields: { key: f.string('Recovery key (base64)').sensitive(), reset: f.bool('Accepted for compatibility') },
    unauthenticated: true,
    allowSealed: true,
    operations: {
      update: async ({ engine, data }) => {
        // Shared storage: another node may have initialised it since this one started.
        if (!engine.isInitialized() && !(await engine.refreshSealConfig())) throw invalid('Vault is not initialized');
        if (data.key && engine.isSealed()) await engine.unsealWithRecoveryKey(data.key);
        return rawJson(sealStatus(engine));
      },
    },
  }),
  route({
    path: 'seal',
    standby: 'local', // every cluster node answers for itself (cluster-wire.md §2.3)
    summary: 'Seal: forget the keys until the next unseal',
    fields: {},
    sudo: true,
    operations: {
      update: async ({ engine }) => {
        await engine.seal();
      },
    },
    cli: { command: 'operator seal', confirm: true },
  }),
  route({
    path: 'mounts/*path/tune',
    summary: 'Read or tune a mount',
    fields: { path: f.name('Mount path'), description: f.string('New description'), options: f.stringMap('Engine options'), default_lease_ttl: f.any('Ignored'), max_lease_ttl: f.any('Ignored') },
    operations: {
      read: ({ engine, data }) => {
        const m = engine.findMount(data.path);
        if (!m) throw invalid('path', `cannot fetch sysview for path "${data.path}/"`);
        return { data: { description: m.description, options: m.options, default_lease_ttl: 2764800, max_lease_ttl: 2764800, force_no_cache: false } };
      },
      update: async ({ engine, data }) => {
        await engine.tune(data.path, { description: data.description, options: data.options });
      },
    },
  }),
  route({
    path: 'mounts/*path',
    summary: 'Mount, read or unmount a secrets engine',
    fields: {
      path: f.name('Mount path'),
      type: f.string('Engine type: transit, kv (with options.version=2) or kv-v2'),
      description: f.string('Human description').default(''),
      options: f.stringMap('Engine options, e.g. version=2 for kv'),
      config: f.map('Mount configuration'),
      local: f.bool('Accepted for compatibility'),
      seal_wrap: f.bool('Accepted for compatibility'),
      plugin_name: f.string('Alias of type'),
    },
    operations: {
      read: ({ engine, data }) => {
        const m = engine.findMount(data.path);
        if (!m) throw notFound();
        return { data: mountView(m) };
      },
      update: async ({ engine, data }) => {
        const type = data.type ?? data.plugin_name;
        if (!type) throw invalid('type', 'is required');
        await engine.mount(data.path, type, { description: data.description, options: data.options ?? null, config: data.config ? normalizeMountConfig(data.config) : undefined });
      },
      delete: async ({ engine, data }) => {
        await engine.unmount(data.path);
      },
    },
  }),
  route({
    path: 'mounts',
    summary: 'List mounted secrets engines',
    fields: {},
    operations: {
      read: ({ engine }) => {
        const out: Record<string, unknown> = {};
        for (const m of engine.mounts()) out[m.path] = mountView(m);
        out['sys/'] = { accessor: 'system_internal', type: 'system', description: 'system endpoints used for control, policy and debugging', config: {}, options: null, local: false, seal_wrap: false, external_entropy_access: false, uuid: 'sys' };
        return { data: out };
      },
    },
    cli: { command: 'secrets list' },
  }),
  route({
    path: 'policies/acl',
    summary: 'List ACL policies',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.policies.list(), policies: await engine.policies.list() } }) },
  }),
  route({
    path: 'policies/acl/:name',
    summary: 'Read, write or delete an ACL policy (HCL or JSON)',
    fields: { name: policyName, policy: f.string('Policy document in HCL or JSON') },
    operations: {
      read: async ({ engine, data }) => {
        const p = await engine.policies.get(data.name);
        if (!p) throw notFound();
        return { data: { name: p.name, policy: p.raw } };
      },
      update: async ({ engine, data }) => {
        if (!data.policy) throw invalid('policy', 'is required');
        await engine.policies.put(data.name, data.policy);
        engine.invalidateAcls();
      },
      delete: async ({ engine, data }) => {
        await engine.policies.delete(data.name);
        engine.invalidateAcls();
      },
    },
  }),
  route({
    path: 'policy',
    summary: 'List policies (legacy endpoint)',
    fields: {},
    operations: { read: async ({ engine }) => ({ data: { keys: await engine.policies.list(), policies: await engine.policies.list() } }) },
  }),
  route({
    path: 'policy/:name',
    summary: 'Read, write or delete a policy (legacy endpoint)',
    fields: { name: policyName, policy: f.string('Policy document'), rules: f.string('Policy document (legacy name)') },
    operations: {
      read: async ({ engine, data }) => {
        const p = await engine.policies.get(data.name);
        if (!p) throw notFound();
        return { data: { name: p.name, rules: p.raw } };
      },
      update: async ({ engine, data }) => {
        const text = data.policy ?? data.rules;
        if (!text) throw invalid('policy', 'is required');
        await engine.policies.put(data.name, text);
        engine.invalidateAcls();
      },
      delete: async ({ engine, data }) => {
        await engine.policies.delete(data.name);
        engine.invalidateAcls();
      },
    },
  }),
  route({
    path: 'plugins/reload/backend',
    summary: 'Reload engines by mount path or plugin (type) name; applies transit cache-config',
    fields: { plugin: f.string('Engine type to reload, e.g. transit'), mounts: f.strings('Mount paths to reload'), scope: f.string('Accepted for compatibility') },
    rules: [{ kind: 'oneOf', fields: ['plugin', 'mounts'] }],
    operations: {
      update: async ({ engine, data }) => {
        if (data.plugin && data.mounts?.length) throw invalid('plugin', 'give either plugin or mounts, not both');
        const reloaded = await engine.reload({ plugin: data.plugin, mounts: data.mounts });
        return { data: { reload_id: '', reloaded } };
      },
    },
  }),
  route({
    path: 'capabilities-self',
    summary: "The calling token's capabilities on paths",
    fields: { path: f.string('Path'), paths: f.strings('Paths') },
    operations: {
      update: async ({ engine, data, token }) => {
        const paths = data.paths ?? (data.path ? [data.path] : []);
        if (!paths.length) throw invalid('paths', 'is required');
        const out: Record<string, unknown> = {};
        for (const p of paths) out[p] = await engine.capabilities(token!, p);
        if (paths.length === 1) out.capabilities = out[paths[0]!];
        return { data: out };
      },
    },
  }),
];

/** Extra sys routes contributed by other modules (audit devices, openapi). Registered before start. */
export const extraSysRoutes: AnyRoute[] = [];

/** The system module; its instance is the core itself. */
export const sysEngine: EngineModule<SysCore & { close?(): Promise<void> }> = {
  type: 'system',
  accessorPrefix: 'system',
  description: 'system endpoints used for control, policy and debugging',
  get routes() {
    return [...extraSysRoutes, ...auditRoutes, ...uiMountsRoutes, ...sysRoutes];
  },
  async create(env) {
    return env.core as unknown as SysCore;
  },
};

