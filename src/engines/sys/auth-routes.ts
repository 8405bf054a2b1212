/**
 * `sys/auth`: list, enable, read, disable and tune auth methods (hashicorp/vault vault/logical_system.go
 * handleAuthTable/handleEnableAuth/handleDisableAuth/handleAuthTuneRead/Write; identity-wire.md section 1).
 * Enabling, reading one, disabling and tuning are root-protected (sudo); listing is not;
 * `sys/mounts/auth/:path/tune` tunes without sudo, as Vault allows.
 */
import { invalid } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo } from '../../framework/context.js';
import type { SysParts } from './sys-parts.js';
import { COMMON_TUNE_FIELDS, settingsReply, tuneConfigChanges } from './tune-fields.js';

const route = routesFor<SysParts>();

/** Vault's system default/max lease TTL (768h). */
const SYSTEM_TTL = 768 * 3600;

const TOKEN_TYPES = ['default-service', 'default-batch', 'service', 'batch'];

function seconds(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 'system') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}

/** One auth mount as `sys/auth` lists it (TTLs 0 when unset). */
export function authMountView(m: MountInfo): Record<string, unknown> {
  const c = m.config;
  const config: Record<string, unknown> = {
    default_lease_ttl: seconds(c.default_lease_ttl),
    max_lease_ttl: seconds(c.max_lease_ttl),
    force_no_cache: c.force_no_cache === true,
    token_type: typeof c.token_type === 'string' ? c.token_type : 'default-service',
  };
  for (const k of [
    'listing_visibility',
    'audit_non_hmac_request_keys',
    'audit_non_hmac_response_keys',
    'passthrough_request_headers',
    'allowed_response_headers',
  ]) {
    if (c[k] !== undefined && c[k] !== '' && !(Array.isArray(c[k]) && (c[k] as unknown[]).length === 0))
      config[k] = c[k];
  }
  return {
    accessor: m.accessor,
    config,
    deprecation_status: 'supported',
    description: m.description,
    external_entropy_access: false,
    local: m.local ?? false,
    options: m.options,
    plugin_version: '',
    running_plugin_version: `v0.0.0+builtin.keyhold`,
    running_sha256: '',
    seal_wrap: m.seal_wrap ?? false,
    type: m.type,
    uuid: m.uuid,
  };
}

/** Validate and normalise an auth mount's config (enable body or tune body); 400 naming the key. */
function authConfig(input: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['default_lease_ttl', 'max_lease_ttl'] as const) {
    const v = input[k];
    if (v === undefined) continue;
    out[k] = v === '' || v === 'system' ? 0 : parseDuration(`${prefix}${k}`, v);
  }
  if (
    typeof out.default_lease_ttl === 'number' &&
    typeof out.max_lease_ttl === 'number' &&
    out.max_lease_ttl !== 0 &&
    out.default_lease_ttl > out.max_lease_ttl
  ) {
    throw invalid('given default lease TTL greater than given max lease TTL');
  }
  // An empty token_type means "unchanged" (clients send the zero value).
  if (input.token_type !== undefined && input.token_type !== '') {
    if (typeof input.token_type !== 'string' || !TOKEN_TYPES.includes(input.token_type))
      throw invalid("invalid value for 'token_type'");
    out.token_type = input.token_type;
  }
  if (input.listing_visibility !== undefined) {
    if (!['', 'unauth', 'hidden'].includes(String(input.listing_visibility)))
      throw invalid(`${prefix}listing_visibility`, 'must be "unauth", "hidden" or ""');
    out.listing_visibility = String(input.listing_visibility);
  }
  for (const k of [
    'audit_non_hmac_request_keys',
    'audit_non_hmac_response_keys',
    'passthrough_request_headers',
    'allowed_response_headers',
  ]) {
    const v = input[k];
    if (v === undefined) continue;
    if (typeof v === 'string') out[k] = v === '' ? [] : v.split(',').map((s) => s.trim());
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) out[k] = v;
    else throw invalid(`${prefix}${k}`, 'expected a list of strings');
  }
  if (input.force_no_cache !== undefined)
    out.force_no_cache = input.force_no_cache === true || input.force_no_cache === 'true';
  return out;
}

/** `user_lockout_config` of a tune body (Vault docs concepts/user-lockout): durations to seconds. */
function lockoutConfig(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.lockout_threshold !== undefined) {
    const n = Number(c.lockout_threshold);
    if (!Number.isInteger(n) || n < 0) throw invalid('user_lockout_config.lockout_threshold', 'must be a whole number');
    out.lockout_threshold = n;
  }
  for (const k of ['lockout_duration', 'lockout_counter_reset'] as const)
    if (c[k] !== undefined) out[k] = parseDuration(`user_lockout_config.${k}`, c[k]);
  if (c.lockout_disable !== undefined) out.lockout_disable = c.lockout_disable === true || c.lockout_disable === 'true';
  return out;
}

function tuneView(m: MountInfo): Record<string, unknown> {
  const v = authMountView(m);
  const c = v.config as Record<string, unknown>;
  const out: Record<string, unknown> = {
    default_lease_ttl: (c.default_lease_ttl as number) || SYSTEM_TTL,
    max_lease_ttl: (c.max_lease_ttl as number) || SYSTEM_TTL,
    description: m.description,
    force_no_cache: c.force_no_cache,
    token_type: c.token_type,
    plugin_version: '',
  };
  if (m.options) out.options = m.options;
  for (const k of Object.keys(c)) if (!(k in out) && k !== 'force_no_cache') out[k] = c[k];
  return out;
}

const tuneFields = {
  ...COMMON_TUNE_FIELDS,
  path: f.name('Auth mount path'),
  token_type: f.string('default-service, default-batch, service or batch'),
  user_lockout_config: f.map(
    'AppRole login lockout: lockout_threshold, lockout_duration, lockout_counter_reset, lockout_disable',
  ),
};

function tuneHandlers() {
  return {
    read: ({ engine, data }: { engine: SysParts; data: { path: string } }) => {
      const m = engine.mounts.findAuthMount(data.path);
      if (!m)
        throw invalid(`cannot fetch sysview for path "auth/${data.path.replace(/^auth\//, '').replace(/\/*$/, '')}/"`);
      return { data: tuneView(m) };
    },
    update: async ({
      engine,
      data,
      raw,
    }: {
      engine: SysParts;
      data: Record<string, unknown> & { path: string };
      raw: Record<string, unknown>;
    }) => {
      const m = engine.mounts.findAuthMount(data.path);
      if (data.user_lockout_config !== undefined && m && !['approle', 'ldap', 'userpass'].includes(m.type)) {
        throw invalid(`tuning of user lockout configuration for auth type "${m.type}" not allowed`);
      }
      if (!m)
        throw invalid(`cannot fetch sysview for path "auth/${data.path.replace(/^auth\//, '').replace(/\/*$/, '')}/"`);
      // The common tune fields (tune-fields.ts), then what only auth mounts have.
      const config = { ...tuneConfigChanges(raw, m), ...authConfig({ token_type: raw.token_type }, '') };
      if (data.user_lockout_config !== undefined)
        config.user_lockout_config = lockoutConfig(data.user_lockout_config as Record<string, unknown>);
      await engine.mounts.tuneAuth(data.path, {
        description: data.description as string | undefined,
        config: Object.keys(config).length ? config : undefined,
        options: data.options as Record<string, string> | undefined,
      });
      return settingsReply(raw, tuneFields);
    },
  };
}

/** The `sys/auth` routes; listed before `sysRoutes` (so `mounts/auth/*path/tune` wins over `mounts/*path/tune`). */
export const authRoutes: AnyRoute[] = [
  route({
    path: 'auth',
    summary: 'List enabled auth methods',
    fields: {},
    operations: {
      read: ({ engine }) => {
        const out: Record<string, unknown> = {};
        for (const m of engine.mounts.authMounts()) out[m.path.slice('auth/'.length)] = authMountView(m);
        return { data: out };
      },
    },
    cli: { command: 'auth list' },
  }),
  route({
    path: 'auth/*path/tune',
    summary: 'Read or tune an auth method (TTLs, description, token type)',
    fields: tuneFields,
    sudo: true,
    operations: tuneHandlers(),
  }),
  route({
    path: 'mounts/auth/*path/tune',
    summary: 'Read or tune an auth method without sudo',
    fields: tuneFields,
    operations: tuneHandlers(),
  }),
  route({
    path: 'auth/*path',
    summary: 'Enable, read or disable an auth method (disabling revokes its tokens)',
    fields: {
      path: f.name('Mount path under auth/'),
      type: f.string('Method type: approle, jwt, oidc, userpass, github or cert'),
      description: f.string('Human description'),
      config: f.map('default_lease_ttl, max_lease_ttl, token_type, listing_visibility, audit and header lists'),
      options: f.stringMap('Method options'),
      local: f.bool('Accepted for compatibility'),
      seal_wrap: f.bool('Accepted for compatibility'),
      external_entropy_access: f.bool('Accepted for compatibility'),
      plugin_name: f.string('Alias of type'),
      plugin_version: f.string('Accepted for compatibility'),
    },
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const m = engine.mounts.findAuthMount(data.path);
        if (!m) throw invalid(`No auth engine at ${data.path.replace(/\/*$/, '')}/`);
        return { data: authMountView(m) };
      },
      update: async ({ engine, data }) => {
        const type = data.type ?? data.plugin_name ?? '';
        const config = data.config ? authConfig(data.config, 'config.') : {};
        await engine.mounts.enableAuth(data.path, type, {
          description: data.description,
          options: data.options ?? null,
          config,
          local: data.local,
          seal_wrap: data.seal_wrap,
        });
      },
      delete: async ({ engine, data }) => {
        await engine.mounts.disableAuth(data.path);
      },
    },
  }),
];
