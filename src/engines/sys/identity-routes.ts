/**
 * The `identity/` mount: entities, entity aliases, groups, group aliases and lookups (hashicorp/vault
 * vault/identity_store*.go), one file per resource under identity/, and the identity token issuer
 * (oidc-routes.ts). The store behind the first is auth/identity.ts; logins create entities and aliases
 * through it as well.
 */
import { OidcIssuer } from '../../auth/oidc/issuer.js';
import type { EngineModule } from '../../framework/engine.js';
import type { AnyRoute } from '../../framework/route.js';
import { entityAliasRoutes } from './identity/entity-alias-routes.js';
import { entityRoutes } from './identity/entity-routes.js';
import { groupAliasRoutes } from './identity/group-alias-routes.js';
import { groupRoutes } from './identity/group-routes.js';
import { lookupRoutes } from './identity/lookup-routes.js';
import { oidcRoutes, type OidcEngine } from './oidc-routes.js';
import type { IdentityParts } from './sys-parts.js';
import { partsRequired } from './with-parts.js';

/** Routes of the identity store (the OIDC issuer's are added in the module below). */
export const identityRoutes: AnyRoute[] = [
  ...entityRoutes,
  ...entityAliasRoutes,
  ...groupRoutes,
  ...groupAliasRoutes,
  ...lookupRoutes,
];

/** The identity engine instance: the identity store and the identity token issuer. */
export interface IdentityEngine extends OidcEngine {
  close(): Promise<void>;
  invalidate(key: string): void;
}

/** The identity module's route table (docs, OpenAPI); the core mounts `identityEngineFor` its identity store. */
export const identityEngine: EngineModule<IdentityEngine> = {
  type: 'identity',
  accessorPrefix: 'identity',
  description: 'identity store',
  routes: [...identityRoutes, ...oidcRoutes],
  create: partsRequired('identity'),
};

/** The identity module serving the core's identity store, mounted internally at identity/. */
export function identityEngineFor(parts: IdentityParts): EngineModule<IdentityEngine> {
  return {
    ...identityEngine,
    async create(env) {
      const oidc = new OidcIssuer(env.storage, env.clock, env.logger, () => env.core.apiAddr);
      // Keys rotate on the node that writes; a standby's instance is recreated when it becomes active.
      if (!env.standby) oidc.start();
      return {
        identity: parts.identity,
        oidc,
        close: async () => oidc.stop(),
        invalidate: () => oidc.forget(),
      };
    },
  };
}
