/**
 * The route catalogue the doc generators read: every engine module by mount type, and the internal
 * mounts (sys/, auth/token/, sys/sync/) that the core always has. Same values the router serves.
 */
import type { EngineModule } from '../framework/engine.js';
import { ENGINES } from '../engines/registry.js';
import { sysModule } from '../engines/sys/index.js';
import type { OpenApiGenerator } from '../engines/sys/openapi-route.js';
import { tokenEngine } from '../engines/sys/token-routes.js';
import { syncEngine } from '../sync/index.js';
import type { MountedRoutes } from './mounted-routes.js';
import { buildOpenApi } from './openapi.js';

export type { MountedRoutes } from './mounted-routes.js';

/**
 * The OpenAPI document of the internal mounts plus `mounts`: the generator the server hands the sys
 * module for `sys/internal/specs/openapi`.
 */
export const openApiOfMounts: OpenApiGenerator = (mounts, request) => buildOpenApi(mountedRoutes(mounts), request);

/** The sys module as documented here (its OpenAPI route builds with this catalogue). */
const sysEngine = sysModule({ openApi: openApiOfMounts });

/** Internal mounts in the order the core creates them (server/core/mount-table.ts load). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const INTERNAL_MOUNTS: ReadonlyArray<{ path: string; module: EngineModule<any> }> = [
  { path: 'sys/', module: sysEngine },
  { path: 'auth/token/', module: tokenEngine },
  { path: 'sys/sync/', module: syncEngine },
];

/** The mounts `keyhold server --dev` creates; used for offline documents and path-help without a daemon. */
export const DEV_MOUNTS: ReadonlyArray<{ path: string; type: string }> = [
  { path: 'transit/', type: 'transit' },
  { path: 'secret/', type: 'kv' },
];

/** The engine module serving a mount type (`kv-v2` is an alias of `kv`), or undefined. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function moduleOf(type: string): EngineModule<any> | undefined {
  if (type === 'kv-v2') return ENGINES.kv;
  return ENGINES[type] ?? INTERNAL_MOUNTS.find((m) => m.module.type === type)?.module;
}

/** Internal mounts plus the given user mounts, each with its module's routes; unknown types are skipped. */
export function mountedRoutes(
  mounts: ReadonlyArray<{ path: string; type: string; description?: string }>,
): MountedRoutes[] {
  const out: MountedRoutes[] = INTERNAL_MOUNTS.map(({ path, module }) => ({
    path,
    type: module.type,
    description: module.description,
    routes: module.routes,
    internal: true,
  }));
  for (const m of mounts) {
    const path = m.path.endsWith('/') ? m.path : m.path + '/';
    if (out.some((o) => o.path === path)) continue;
    const module = ENGINES[m.type === 'kv-v2' ? 'kv' : m.type];
    if (!module) continue;
    out.push({
      path,
      type: module.type,
      description: m.description || module.description,
      routes: module.routes,
      internal: false,
    });
  }
  return out;
}

/** Find the mount serving a full logical path (longest mount path first, as the core resolves). */
export function resolveMount(mounts: readonly MountedRoutes[], fullPath: string): MountedRoutes | undefined {
  const p = fullPath.replace(/^\/+/, '').replace(/^v1\//, '');
  const withSlash = p.endsWith('/') ? p : p + '/';
  return [...mounts].sort((a, b) => b.path.length - a.path.length).find((m) => withSlash.startsWith(m.path));
}
