/**
 * identity/group-alias: the name an external group has on an auth mount (hashicorp/vault
 * vault/identity_store_group_aliases.go). A login whose method reports that group name (a JWT groups
 * claim, ...) makes the entity a member of the group. A new alias without canonical_id gets a new
 * external group.
 */
import { notFound } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { aliasListInfo, aliasView, type IdentityStoreEngine } from './views.js';

const route = routesFor<IdentityStoreEngine>();

const aliasFields = {
  name: f.string('Name of the group as the auth method reports it'),
  mount_accessor: f.string('Accessor of the auth mount'),
  canonical_id: f.string('Id of the external group the alias belongs to'),
};

function reply(r: { id: string; canonical_id: string } | null) {
  return r ? { data: r } : undefined;
}

/** Routes of identity/group-alias. */
export const groupAliasRoutes: AnyRoute[] = [
  route({
    path: 'group-alias',
    summary: 'Create a group alias, or update one given by id',
    fields: { id: f.string('Id of a group alias to update'), ...aliasFields },
    operations: { update: async ({ engine, data }) => reply(await engine.identity.upsertGroupAlias(data)) },
  }),
  route({
    path: 'group-alias/id',
    summary: 'List group alias ids',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const keys = await engine.identity.groups.aliasIds();
        const info: Record<string, unknown> = {};
        for (const id of keys) {
          const g = await engine.identity.groups.byAliasId(id);
          if (g?.alias) info[id] = aliasListInfo(engine.identity, g.alias);
        }
        return { data: { keys, key_info: info } };
      },
    },
  }),
  route({
    path: 'group-alias/id/:id',
    summary: 'Read, update or delete a group alias by id',
    fields: { ...aliasFields, id: f.name('Group alias id') },
    operations: {
      read: async ({ engine, data }) => {
        const g = await engine.identity.groups.byAliasId(data.id);
        if (!g?.alias) throw notFound();
        return { data: aliasView(engine.identity, g.alias) };
      },
      update: async ({ engine, data }) => reply(await engine.identity.upsertGroupAlias(data)),
      delete: async ({ engine, data }) => {
        await engine.identity.deleteGroupAlias(data.id);
        return undefined;
      },
    },
  }),
];
