/** The `sys/` routes: seal and init, health, mounts, ACL policies, plugin reload, capabilities. */
import { invalid, notFound } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo } from '../../framework/context.js';
import type { SysParts } from './sys-parts.js';
import { partsRequired, type PartsModule } from './with-parts.js';
import { auditRoutes } from './audit-routes.js';
import { openapiRoute, type OpenApiGenerator } from './openapi-route.js';
import { uiMountsRoutes } from './ui-mounts-route.js';
import { haRoutes } from './ha-routes.js';
import { authRoutes } from './auth-routes.js';
import { managedKeyRoutes } from './managed-key-routes.js';
import { sealRoutes } from './seal-routes.js';
import { capabilitiesRoutes } from './capabilities-routes.js';
import { toolsRoutes } from './tools-routes.js';
import { wrappingRoutes } from './wrapping-routes.js';
import { decodePolicyText } from '../../auth/policies.js';
import { activationRoutes } from '../../sync/activation.js';
import { shareRoutes } from './share-routes.js';
import {
  SECRETS_TUNE_FIELDS,
  managedKeyList,
  settingsReply,
  secretsTuneView,
  tuneConfigChanges,
  tunedSettingsView,
} from './tune-fields.js';
import { metricsRoutes } from './metrics-route.js';
import { rotateRoutes } from './rotate-routes.js';
import { generateRootRoutes } from './generate-root-routes.js';
import { snapshotRoutes } from './snapshot-routes.js';
import { snapshotAutoRoutes } from './snapshot-auto-routes.js';

const route = routesFor<SysParts>();

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
  return { ...out, ...tunedSettingsView(c) };
}

/** Validate a mount's config at enable time: the tune rules (400 naming the key), force_no_cache, unknown keys dropped. */
function normalizeMountConfig(c: Record<string, unknown>, type: string): Record<string, unknown> {
  const blank: MountInfo = {
    path: '',
    type,
    accessor: '',
    uuid: '',
    description: '',
    options: null,
    config: {},
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
  };
  const out: Record<string, unknown> = prefixFieldErrors('config.', () => tuneConfigChanges(c, blank));
  if (c.force_no_cache !== undefined) out.force_no_cache = c.force_no_cache === true || c.force_no_cache === 'true';
  if (c.allowed_managed_keys !== undefined) out.allowed_managed_keys = managedKeyList(c.allowed_managed_keys);
  return out;
}

/** Run `fn`, naming fields of its 400s under `prefix` (a mount's `config.` map). */
function prefixFieldErrors<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Error && (e as { status?: number }).status === 400 && /^[a-z_]+: /.test(e.message))
      e.message = prefix + e.message;
    throw e;
  }
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

/** Routes of the sys mount. */
export const sysRoutes: AnyRoute[] = [
  ...sealRoutes,
  ...haRoutes,
  route({
    path: 'seal',
    standby: 'local', // every cluster node answers for itself (cluster-wire.md §2.3)
    summary: 'Seal: forget the keys until the next unseal',
    fields: {},
    sudo: true,
    operations: {
      update: async ({ engine }) => {
        await engine.seal.seal();
      },
    },
    cli: { command: 'operator seal', confirm: true },
  }),
  route({
    path: 'mounts/*path/tune',
    summary: 'Read or tune a mount',
    description:
      'Every field takes effect: TTLs bound KV v1 lease_duration, audit keys steer the audit devices, headers filter what the engine sees and sets (docs/operations.md).',
    fields: SECRETS_TUNE_FIELDS,
    operations: {
      read: ({ engine, data }) => {
        const m = engine.mounts.findMount(data.path);
        if (!m) throw invalid('path', `cannot fetch sysview for path "${data.path}/"`);
        return { data: secretsTuneView(m) };
      },
      update: async ({ engine, data, raw }) => {
        const m = engine.mounts.findMount(data.path);
        if (!m) throw invalid('path', `cannot fetch sysview for path "${data.path}/"`);
        const config = tuneConfigChanges(raw, m);
        if (raw.allowed_managed_keys !== undefined)
          config.allowed_managed_keys = managedKeyList(raw.allowed_managed_keys);
        const warnings = await engine.mounts.tune(data.path, {
          description: data.description,
          options: data.options,
          config: Object.keys(config).length ? config : undefined,
        });
        // An upgrade of KV v1 to v2 answers with Vault's warning (200); other tunes are 204.
        return warnings && warnings.length ? { data: null, warnings } : settingsReply(raw, SECRETS_TUNE_FIELDS);
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
        const m = engine.mounts.findMount(data.path);
        if (!m) throw notFound();
        return { data: mountView(m) };
      },
      update: async ({ engine, data }) => {
        const type = data.type ?? data.plugin_name;
        if (!type) throw invalid('type', 'is required');
        await engine.mounts.mount(data.path, type, {
          description: data.description,
          options: data.options ?? null,
          config: data.config ? normalizeMountConfig(data.config, type) : undefined,
        });
      },
      delete: async ({ engine, data }) => {
        await engine.mounts.unmount(data.path);
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
        for (const m of engine.mounts.list()) out[m.path] = mountView(m);
        out['sys/'] = {
          accessor: 'system_internal',
          type: 'system',
          description: 'system endpoints used for control, policy and debugging',
          config: {},
          options: null,
          local: false,
          seal_wrap: false,
          external_entropy_access: false,
          uuid: 'sys',
        };
        // Vault lists its built-in per-token store too (`vault secrets list` shows cubbyhole/).
        out['cubbyhole/'] = {
          accessor: 'cubbyhole_internal',
          type: 'cubbyhole',
          description: 'per-token private secret storage',
          config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
          options: null,
          local: true,
          seal_wrap: false,
          external_entropy_access: false,
          uuid: 'cubbyhole',
        };
        return { data: out };
      },
    },
    cli: { command: 'secrets list' },
  }),
  route({
    path: 'policies/acl',
    summary: 'List ACL policies',
    fields: {},
    operations: {
      list: async ({ engine }) => ({
        data: { keys: await engine.policies.list(), policies: await engine.policies.list() },
      }),
    },
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
        if (!data.policy) throw invalid("'policy' parameter not supplied or empty");
        // Vault accepts a base64-encoded policy body (sys/policies/acl docs).
        await engine.policies.put(data.name, decodePolicyText(data.policy));
        engine.access.invalidateAcls();
      },
      delete: async ({ engine, data }) => {
        await engine.policies.delete(data.name);
        engine.access.invalidateAcls();
      },
    },
  }),
  route({
    path: 'policy',
    summary: 'List policies (legacy endpoint)',
    fields: {},
    operations: {
      read: async ({ engine }) => ({
        data: { keys: await engine.policies.list(), policies: await engine.policies.list() },
      }),
    },
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
        if (!text) throw invalid("'policy' parameter not supplied or empty");
        await engine.policies.put(data.name, decodePolicyText(text));
        engine.access.invalidateAcls();
      },
      delete: async ({ engine, data }) => {
        await engine.policies.delete(data.name);
        engine.access.invalidateAcls();
      },
    },
  }),
  route({
    path: 'plugins/reload/backend',
    summary: 'Reload engines by mount path or plugin (type) name; applies transit cache-config',
    fields: {
      plugin: f.string('Engine type to reload, e.g. transit'),
      mounts: f.strings('Mount paths to reload'),
      scope: f.string('Accepted for compatibility'),
    },
    rules: [{ kind: 'oneOf', fields: ['plugin', 'mounts'] }],
    operations: {
      update: async ({ engine, data }) => {
        if (data.plugin && data.mounts?.length) throw invalid('plugin', 'give either plugin or mounts, not both');
        const reloaded = await engine.mounts.reload({ plugin: data.plugin, mounts: data.mounts });
        return { data: { reload_id: '', reloaded } };
      },
    },
  }),
];

/** What the server gives the sys module: the parts that live above the engines. */
export interface SysModuleParts {
  /** Builds `sys/internal/specs/openapi` (src/docs' generator over every engine's route table). */
  openApi: OpenApiGenerator;
}

/** The system module; its instance is the core's parts (the core mounts it with `withParts`). */
export function sysModule(parts: SysModuleParts): PartsModule<SysParts> {
  const routes = [
    ...auditRoutes,
    ...uiMountsRoutes,
    ...authRoutes,
    ...capabilitiesRoutes,
    ...wrappingRoutes,
    ...toolsRoutes,
    ...activationRoutes,
    ...managedKeyRoutes,
    ...shareRoutes,
    ...metricsRoutes,
    ...rotateRoutes,
    ...generateRootRoutes,
    ...snapshotRoutes,
    ...snapshotAutoRoutes,
    openapiRoute(parts.openApi),
    ...sysRoutes,
  ];
  return {
    type: 'system',
    accessorPrefix: 'system',
    description: 'system endpoints used for control, policy and debugging',
    routes,
    create: partsRequired('system'),
  };
}
