/**
 * The `identity/` mount: entities, entity aliases, groups, group aliases and lookups (hashicorp/vault
 * vault/identity_store*.go), one file per resource under identity/. The store behind them is
 * auth/identity.ts; logins create entities and aliases through it as well.
 */
import type { EngineModule } from '../../framework/engine.js';
import type { AnyRoute } from '../../framework/route.js';
import type { SysCore } from './sys-core.js';
import { entityAliasRoutes } from './identity/entity-alias-routes.js';
import { entityRoutes } from './identity/entity-routes.js';
import { groupAliasRoutes } from './identity/group-alias-routes.js';
import { groupRoutes } from './identity/group-routes.js';
import { lookupRoutes } from './identity/lookup-routes.js';

/** Routes of the identity mount. */
export const identityRoutes: AnyRoute[] = [...entityRoutes, ...entityAliasRoutes, ...groupRoutes, ...groupAliasRoutes, ...lookupRoutes];

/** The identity module, mounted internally at identity/. */
export const identityEngine: EngineModule<SysCore & { close?(): Promise<void> }> = {
  type: 'identity',
  accessorPrefix: 'identity',
  description: 'identity store',
  routes: identityRoutes,
  async create(env) {
    return env.core as unknown as SysCore;
  },
};
