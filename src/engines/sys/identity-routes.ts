/**
 * The `identity/` routes keyhold serves: entities and aliases created by logins, readable by id and
 * found with `identity/lookup/entity` (hashicorp/vault vault/identity_store_entities.go,
 * identity_lookup.go). Entities are made by the token store at login; these routes only read.
 */
import { invalid, notFound } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { AliasRecord, EntityRecord } from '../../auth/identity.js';
import type { EngineModule } from '../../framework/engine.js';
import type { IdentityParts } from './sys-parts.js';
import { partsRequired } from './with-parts.js';
import { OidcIssuer } from '../../auth/oidc/issuer.js';
import { oidcRoutes, type OidcEngine } from './oidc-routes.js';

const route = routesFor<IdentityParts>();

function aliasView(a: AliasRecord): Record<string, unknown> {
  return {
    canonical_id: a.canonical_id,
    creation_time: a.creation_time,
    custom_metadata: {},
    id: a.id,
    last_update_time: a.last_update_time,
    local: false,
    merged_from_canonical_ids: null,
    metadata: a.metadata,
    mount_accessor: a.mount_accessor,
    mount_path: a.mount_path,
    mount_type: a.mount_type,
    name: a.name,
  };
}

/** An entity as Vault's `identity/entity/id/:id` answers it. */
function entityView(e: EntityRecord): Record<string, unknown> {
  return {
    aliases: e.aliases.map(aliasView),
    creation_time: e.creation_time,
    direct_group_ids: [],
    disabled: e.disabled,
    group_ids: [],
    id: e.id,
    inherited_group_ids: [],
    last_update_time: e.last_update_time,
    merged_entity_ids: null,
    metadata: Object.keys(e.metadata).length ? e.metadata : null,
    name: e.name,
    namespace_id: 'root',
    policies: e.policies,
  };
}

/** Routes of the identity mount. */
export const identityRoutes: AnyRoute[] = [
  route({
    path: 'entity/id',
    summary: 'List entity ids',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.identity.listIds() } }) },
  }),
  route({
    path: 'entity/id/:id',
    summary: 'Read an entity (created by logins) by id',
    fields: { id: f.name('Entity id') },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.entity(data.id);
        if (!e) throw notFound();
        return { data: entityView(e) };
      },
    },
  }),
  route({
    path: 'entity/name/:name',
    summary: 'Read an entity by name',
    fields: { name: f.name('Entity name') },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.byName(data.name);
        if (!e) throw notFound();
        return { data: entityView(e) };
      },
    },
  }),
  route({
    path: 'entity-alias/id/:id',
    summary: 'Read an entity alias by id',
    fields: { id: f.name('Alias id') },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.byAliasId(data.id);
        const a = e?.aliases.find((x) => x.id === data.id);
        if (!a) throw notFound();
        return { data: aliasView(a) };
      },
    },
  }),
  route({
    path: 'lookup/entity',
    summary: 'Find an entity by id, name, alias id, or alias name and mount accessor',
    fields: {
      id: f.string('Entity id'),
      name: f.string('Entity name'),
      alias_id: f.string('Alias id'),
      alias_name: f.string('Alias name (with alias_mount_accessor)'),
      alias_mount_accessor: f.string('Accessor of the alias mount'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const given = ['id', 'name', 'alias_id', 'alias_name'].filter((k) => (data as Record<string, unknown>)[k]);
        if (given.length === 0) throw invalid('one of id, name, alias_id, or alias_name and alias_mount_accessor must be provided');
        if (given.length > 1) throw invalid('only one of id, name, alias_id, or alias_name and alias_mount_accessor may be provided');
        let e: EntityRecord | null = null;
        if (data.id) e = await engine.identity.entity(data.id);
        else if (data.name) e = await engine.identity.byName(data.name);
        else if (data.alias_id) e = await engine.identity.byAliasId(data.alias_id);
        else {
          if (!data.alias_mount_accessor) throw invalid("'alias_mount_accessor' needs to be set along with 'alias_name'");
          e = await engine.identity.byAlias(data.alias_mount_accessor, data.alias_name!);
        }
        // Vault answers an unknown entity with no response on an update: 204.
        return e ? { data: entityView(e) } : undefined;
      },
    },
  }),
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
