/**
 * identity/entity-alias: the names an entity has on auth mounts (hashicorp/vault
 * vault/identity_store_aliases.go). A login through a mount finds the entity of its alias; an alias made
 * here before the first login ties that login to an existing entity.
 */
import { notFound } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { kvPairs } from './kv-pairs.js';
import { aliasListInfo, aliasView, type IdentityStoreEngine } from './views.js';

const route = routesFor<IdentityStoreEngine>();

const aliasFields = {
  name: f.string('Name of the alias: the user or role name the auth method reports'),
  mount_accessor: f.string('Accessor of the auth mount the alias belongs to'),
  canonical_id: f.string('Id of the entity the alias belongs to'),
  entity_id: f.string('Old name of canonical_id'),
  custom_metadata: f.any('Metadata set through the API (login metadata is separate) (an object, or key=value strings)'),
};

/** The reply of a create or update: Vault answers the alias and entity ids, or 204 when nothing changed. */
function reply(r: { id: string; canonical_id: string } | null) {
  return r ? { data: r } : undefined;
}

/** Routes of identity/entity-alias. */
export const entityAliasRoutes: AnyRoute[] = [
  route({
    path: 'entity-alias',
    summary: 'Create an entity alias, or update one given by id or by name and mount',
    fields: { id: f.string('Id of an alias to update'), ...aliasFields },
    operations: {
      update: async ({ engine, data }) =>
        reply(
          await engine.identity.upsertEntityAlias({
            ...data,
            canonical_id: data.canonical_id || data.entity_id,
            custom_metadata: kvPairs('custom_metadata', data.custom_metadata),
          }),
        ),
    },
  }),
  route({
    path: 'entity-alias/id',
    summary: 'List entity alias ids',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const keys: string[] = [];
        const info: Record<string, unknown> = {};
        for (const id of await engine.identity.entities.aliasIds()) {
          const e = await engine.identity.byAliasId(id);
          const a = e?.aliases.find((x) => x.id === id);
          if (!a) continue;
          keys.push(id);
          info[id] = aliasListInfo(engine.identity, a);
        }
        return { data: { keys, key_info: info } };
      },
    },
  }),
  route({
    path: 'entity-alias/id/:id',
    summary: 'Read, update or delete an entity alias by id',
    fields: { ...aliasFields, id: f.name('Alias id') },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.byAliasId(data.id);
        const a = e?.aliases.find((x) => x.id === data.id);
        if (!a) throw notFound();
        return { data: aliasView(engine.identity, a) };
      },
      update: async ({ engine, data }) =>
        reply(
          await engine.identity.upsertEntityAlias({
            ...data,
            canonical_id: data.canonical_id || data.entity_id,
            custom_metadata: kvPairs('custom_metadata', data.custom_metadata),
          }),
        ),
      delete: async ({ engine, data }) => {
        await engine.identity.deleteEntityAlias(data.id);
        return undefined;
      },
    },
  }),
];
