/**
 * `sys/quotas/rate-limit/:name`, LIST `sys/quotas/rate-limit` and `sys/quotas/config` (Vault's
 * vault/logical_system_quotas.go; fields, defaults and refusals as Vault has them, texts ours where
 * Vault's do not name the field). Quotas are root-protected as in Vault (sudo).
 */
import { invalid } from '../../framework/errors.js';
import { f, parseBool, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo } from '../../framework/context.js';
import type { QuotaManager } from '../../quotas/quota-manager.js';
import type { RateLimitRecord } from '../../quotas/rate-limit.js';
import { settingsReply, stringList } from './tune-fields.js';

/** What the quota routes need of the core. */
export interface QuotaParts {
  readonly quotas: QuotaManager;
  /** The mount serving a logical path, if any. */
  resolve(path: string): { mount: MountInfo } | null;
}

const route = routesFor<QuotaParts>();

/** Seconds of a duration field; 400 naming it when malformed or negative. */
function seconds(name: string, v: unknown, dflt: number): number {
  if (v === undefined || v === null || v === '') return dflt;
  if (typeof v === 'number' && v < 0) throw invalid(name, `must not be negative, got ${v}`);
  if (typeof v === 'string' && v.trim().startsWith('-')) throw invalid(name, `must not be negative, got "${v}"`);
  return parseDuration(name, v);
}

/** Build a quota record from a write: the path split into mount and suffix, the role checked against the mount. */
function recordOf(
  engine: QuotaParts,
  name: string,
  raw: Record<string, unknown>,
  current: RateLimitRecord | undefined,
): RateLimitRecord {
  const rate = raw.rate === undefined ? current?.rate : Number(raw.rate);
  if (rate === undefined) throw invalid('rate', 'is required');
  if (!Number.isFinite(rate) || rate <= 0)
    throw invalid('rate', `must be a positive number, got ${JSON.stringify(raw.rate)}`);
  const interval = seconds('interval', raw.interval, current?.interval ?? 1) || 1;
  const block = seconds('block_interval', raw.block_interval, current?.block_interval ?? 0);
  const path = raw.path === undefined ? (current?.path ?? '') : String(raw.path).replace(/^\/+/, '');
  const role = raw.role === undefined ? (current?.role ?? '') : String(raw.role);
  let mountPath = '';
  let suffix = '';
  if (path !== '') {
    const probe = path.endsWith('*') ? path.slice(0, -1) : path;
    const m = engine.resolve(probe)?.mount;
    if (!m || m.path.startsWith('sys/')) throw invalid('path', `invalid mount path "${path}"`);
    mountPath = m.path;
    // What follows the mount: an exact path, or a prefix when it ends in "*" (Vault's globbed path suffix).
    suffix = probe.length >= m.path.length ? path.slice(m.path.length).replace(/^\/+/, '') : '';
    if (!suffix.endsWith('*')) suffix = suffix.replace(/\/+$/, '');
  }
  if (role !== '') {
    if (mountPath === '' || !mountPath.startsWith('auth/'))
      throw invalid(
        'role',
        `mount path "${mountPath || path}" is not an auth method, so role-based quotas do not apply to it`,
      );
    if (suffix !== '') throw invalid('role', 'only one of a path suffix or a role can be set');
  }
  let inheritable = mountPath === '';
  if (raw.inheritable !== undefined) inheritable = parseBool('inheritable', raw.inheritable);
  else if (current) inheritable = current.inheritable;
  // Without namespaces only the global quota can be inherited (it covers every mount already).
  if (inheritable && mountPath !== '')
    throw invalid('inheritable', 'can only be set on a global quota (path ""); keyhold has no namespaces');
  return {
    name,
    path: mountPath === '' ? '' : mountPath + suffix,
    mount_path: mountPath,
    path_suffix: suffix,
    role,
    rate,
    interval,
    block_interval: block,
    inheritable,
  };
}

const CONFIG_FIELDS = {
  rate_limit_exempt_paths: f.any('Paths never rate-limited (a trailing * makes a prefix); replaces the list'),
  enable_rate_limit_audit_logging: f.bool('Audit requests refused by a rate-limit quota'),
  enable_rate_limit_response_headers: f.bool('Send X-Ratelimit-Limit/-Remaining/-Reset and Retry-After'),
};

const RATE_LIMIT_FIELDS = {
  name: f.name('Quota name'),
  type: f.string('Quota type: rate-limit'),
  path: f.string('"" (global), a mount ("transit/"), a path under it, or a prefix ending in "*"'),
  role: f.string('Role of a login path on an auth mount'),
  rate: f.any('Requests allowed per interval per client address (positive)'),
  interval: f.any('Length of the interval (default 1s)'),
  block_interval: f.any('How long a client over the limit is refused (default 0: not blocked)'),
  inheritable: f.any('Global quota only (no namespaces)'),
};

/** Quota routes. */
export const quotaRoutes: AnyRoute[] = [
  route({
    path: 'quotas/config',
    summary: 'Read or write the quota configuration (exempt paths, audit of refusals, rate-limit headers)',
    fields: CONFIG_FIELDS,
    sudo: true,
    operations: {
      read: ({ engine }) => ({
        data: { ...engine.quotas.config, rate_limit_exempt_paths: [...engine.quotas.config.rate_limit_exempt_paths] },
      }),
      update: async ({ engine, data, raw }) => {
        const cur = engine.quotas.config;
        await engine.quotas.setConfig({
          rate_limit_exempt_paths:
            raw.rate_limit_exempt_paths === undefined
              ? cur.rate_limit_exempt_paths
              : stringList('rate_limit_exempt_paths', raw.rate_limit_exempt_paths),
          enable_rate_limit_audit_logging: data.enable_rate_limit_audit_logging ?? cur.enable_rate_limit_audit_logging,
          enable_rate_limit_response_headers:
            data.enable_rate_limit_response_headers ?? cur.enable_rate_limit_response_headers,
        });
        return settingsReply(raw, CONFIG_FIELDS);
      },
    },
  }),
  route({
    path: 'quotas/rate-limit',
    summary: 'List rate-limit quotas',
    fields: {},
    sudo: true,
    operations: { list: ({ engine }) => ({ data: { keys: engine.quotas.names() } }) },
  }),
  route({
    path: 'quotas/rate-limit/:name',
    summary: 'Read, write or delete a rate-limit quota',
    fields: RATE_LIMIT_FIELDS,
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const r = engine.quotas.get(data.name);
        if (!r) return undefined;
        return {
          data: {
            name: r.name,
            type: 'rate-limit',
            path: r.path,
            role: r.role,
            rate: r.rate,
            interval: r.interval,
            block_interval: r.block_interval,
            inheritable: r.inheritable,
          },
        };
      },
      update: async ({ engine, data, raw }) => {
        if (data.type !== undefined && data.type !== '' && data.type !== 'rate-limit')
          throw invalid('type', `must be "rate-limit", got "${data.type}"`);
        await engine.quotas.put(recordOf(engine, data.name, raw, engine.quotas.get(data.name)));
        return settingsReply(raw, RATE_LIMIT_FIELDS);
      },
      delete: async ({ engine, data }) => {
        await engine.quotas.delete(data.name);
      },
    },
  }),
];
