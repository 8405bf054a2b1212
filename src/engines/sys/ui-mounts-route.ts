/**
 * `GET sys/internal/ui/mounts` and `GET sys/internal/ui/mounts/*path`: the mounts a token may use.
 *
 * The vault CLI's `kv` commands read `sys/internal/ui/mounts/<path>` before anything else to learn the
 * mount path and KV version (`options.version`), then rewrite `secret/foo` to `secret/data/foo`
 * (hashicorp/vault: command/kv_helpers.go, kvPreflightVersionRequest). The Vault web UI reads both.
 *
 * Gating follows hashicorp/vault: vault/logical_system.go (pathInternalUIMountRead, hasMountAccess):
 * the paths are unauthenticated in the route table, but the handler needs a valid token and answers
 * 403 with a "preflight capability check" message unless the token has a non-deny capability on the
 * mount path itself or on some policy path under it. An unknown mount is also a 403 (not a 404), so
 * the endpoint cannot be used to probe which mounts exist.
 *
 * Auth mounts (sys/auth) take part with their `auth/<path>/` paths.
 */
import { denied } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { MountInfo, TokenInfo } from '../../framework/context.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** A mount-table entry as Vault's mountInfo renders it (same shape as `GET sys/mounts/:path`). */
function mountInfoView(m: MountInfo): Record<string, unknown> {
  return {
    accessor: m.accessor,
    config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, ...m.config },
    description: m.description,
    external_entropy_access: m.external_entropy_access ?? false,
    local: m.local ?? false,
    options: m.options,
    plugin_version: '',
    running_plugin_version: '',
    running_sha256: '',
    seal_wrap: m.seal_wrap ?? false,
    type: m.type,
    uuid: m.uuid,
  };
}

/** Built-in mounts Vault's router also matches (keyhold serves them internally, outside the mount table). */
const BUILTIN_SECRET: MountInfo[] = [
  {
    path: 'sys/',
    type: 'system',
    accessor: 'system_internal',
    uuid: 'sys',
    description: 'system endpoints used for control, policy and debugging',
    options: null,
    config: {},
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
  },
];
/** Vault's sanitizeMountPath: trailing slash added, one leading slash removed. */
function sanitize(path: string): string {
  let p = path.endsWith('/') ? path : path + '/';
  if (p.startsWith('/')) p = p.slice(1);
  return p;
}

/** Longest mount (table, `sys/`, `auth/token/`) whose path prefixes `path`, with its full logical path. */
function matchingMount(parts: SysParts, path: string): { entry: MountInfo; fullPath: string } | null {
  const candidates: Array<{ entry: MountInfo; fullPath: string }> = [
    ...parts.mounts.list().map((m) => ({ entry: m, fullPath: m.path })),
    ...BUILTIN_SECRET.map((m) => ({ entry: m, fullPath: m.path })),
    ...parts.mounts.authMounts().map((m) => ({ entry: m, fullPath: m.path })),
  ];
  let best: { entry: MountInfo; fullPath: string } | null = null;
  for (const c of candidates)
    if (path.startsWith(c.fullPath) && (!best || c.fullPath.length > best.fullPath.length)) best = c;
  return best;
}

/**
 * Vault's hasMountAccess: any non-deny capability on the mount path itself, or any policy path at or
 * under the mount (exact or glob, rules merged across the token's policies) granting a capability
 * other than deny.
 */
async function hasMountAccess(parts: SysParts, token: TokenInfo, mountPath: string): Promise<boolean> {
  if (token.root) return true;
  const caps = await parts.access.capabilities(token, mountPath);
  if (!caps.includes('deny')) return true;
  const merged = new Map<string, Set<string>>();
  for (const name of token.policies) {
    const p = await parts.policies.get(name);
    for (const r of p?.rules ?? []) {
      const set = merged.get(r.path) ?? new Set<string>();
      for (const c of r.capabilities) set.add(c);
      merged.set(r.path, set);
    }
  }
  for (const [pattern, set] of merged) {
    const prefix = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
    if (!prefix.startsWith(mountPath) || set.has('deny')) continue;
    if (['create', 'read', 'update', 'delete', 'list', 'sudo', 'patch'].some((c) => set.has(c))) return true;
  }
  return false;
}

function preflightDenied(path: string): Error {
  return denied(
    `preflight capability check returned 403, please ensure client's policies grant access to path ${JSON.stringify(path)}`,
  );
}

/** The `sys/internal/ui/mounts` routes and `sys/auth`; listed before `sysRoutes` in the sys engine. */
export const uiMountsRoutes: AnyRoute[] = [
  route({
    path: 'internal/ui/mounts/*path',
    summary: 'The mount serving a path (vault kv uses it to find the mount and KV version)',
    description:
      'Returns the mount entry of the longest mount matching the path, with its path (trailing slash), type, options ' +
      '({"version":"2"} for KV v2), accessor, description and config. Needs a token with some capability on the mount; ' +
      'otherwise, and for paths under no mount, answers 403.',
    fields: { path: f.name('Path (a secret path or a mount path)') },
    unauthenticated: true,
    operations: {
      read: async ({ engine, data, token }) => {
        const path = sanitize(data.path);
        if (!token) throw denied();
        const hit = matchingMount(engine, path);
        if (!hit) throw preflightDenied(path);
        if (!(await hasMountAccess(engine, token, hit.fullPath))) throw preflightDenied(path);
        return { data: { ...mountInfoView(hit.entry), path: hit.fullPath } };
      },
    },
  }),
  route({
    path: 'internal/ui/mounts',
    summary: 'Mounts the token can use (secret engines and auth methods)',
    fields: {},
    unauthenticated: true,
    operations: {
      read: async ({ engine, token }) => {
        const secret: Record<string, unknown> = {};
        const auth: Record<string, unknown> = {};
        // Without a token Vault lists only mounts with listing_visibility "unauth" (a login page picks
        // the auth method from them), with their type, description and options only.
        if (!token) {
          for (const m of engine.mounts.authMounts()) {
            if (m.config.listing_visibility === 'unauth')
              auth[m.path.slice('auth/'.length)] = { type: m.type, description: m.description, options: m.options };
          }
        }
        if (token) {
          for (const m of [...engine.mounts.list(), ...BUILTIN_SECRET]) {
            if (await hasMountAccess(engine, token, m.path)) secret[m.path] = mountInfoView(m);
          }
          for (const m of engine.mounts.authMounts()) {
            if (await hasMountAccess(engine, token, m.path)) auth[m.path.slice('auth/'.length)] = mountInfoView(m);
          }
        }
        return { data: { secret, auth } };
      },
    },
  }),
];
