/**
 * identity/group: internal groups (members set here: entities and other groups) and external groups
 * (members set by logins through the group's alias), by id and by name (hashicorp/vault
 * vault/identity_store_groups.go). A group's policies apply to the tokens of its member entities and
 * of the members of its member groups.
 */
import type { GroupInput, GroupRecord } from '../../../auth/identity.js';
import { notFound } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { kvPairs } from './kv-pairs.js';
import { groupListInfo, groupView, type IdentityStoreEngine } from './views.js';

const route = routesFor<IdentityStoreEngine>();

const groupFields = {
  name: f.string('Name of the group'),
  type: f.string('internal (members set here) or external (members set by logins through its alias)'),
  metadata: f.any('Metadata (string keys and values) of the group (an object, or key=value strings)'),
  policies: f.strings('Policies of the group; they apply to the tokens of its members'),
  member_entity_ids: f.strings('Ids of the member entities (internal groups)'),
  member_group_ids: f.strings('Ids of the member groups (internal groups)'),
};

/** 200 with id and name when created, 204 when updated (Vault). */
function upsertReply(r: { group: GroupRecord; created: boolean }) {
  return r.created ? { data: { id: r.group.id, name: r.group.name } } : undefined;
}

async function listReply(engine: IdentityStoreEngine, by: 'id' | 'name') {
  const groups = await engine.identity.groups.list();
  const info: Record<string, unknown> = {};
  for (const g of groups) info[g.id] = groupListInfo(engine.identity, g);
  const keys = groups.map((g) => (by === 'id' ? g.id : g.name));
  if (by === 'name') keys.sort();
  return { data: { keys, key_info: info } };
}

function input(data: Omit<GroupInput, 'metadata'> & { id?: string; metadata?: unknown }): GroupInput {
  const { id: _id, metadata, ...rest } = data;
  return { ...rest, metadata: kvPairs('metadata', metadata) };
}

/** Routes of identity/group. */
export const groupRoutes: AnyRoute[] = [
  route({
    path: 'group',
    summary: 'Create a group, or update one given by id or by an existing name',
    fields: { id: f.string('Id of a group to update'), ...groupFields },
    operations: {
      update: async ({ engine, data }) => upsertReply(await engine.identity.upsertGroup(data.id || null, input(data))),
    },
  }),
  route({
    path: 'group/id',
    summary: 'List group ids',
    fields: {},
    operations: { list: async ({ engine }) => listReply(engine, 'id') },
  }),
  route({
    path: 'group/id/:id',
    summary: 'Read, update or delete a group by id',
    fields: { ...groupFields, id: f.name('Group id') },
    operations: {
      read: async ({ engine, data }) => {
        const g = await engine.identity.groups.get(data.id);
        if (!g) throw notFound();
        return { data: await groupView(engine.identity, g) };
      },
      update: async ({ engine, data }) => upsertReply(await engine.identity.upsertGroup(data.id, input(data))),
      delete: async ({ engine, data }) => {
        await engine.identity.deleteGroup(data.id);
        return undefined;
      },
    },
  }),
  route({
    path: 'group/name',
    summary: 'List group names',
    fields: {},
    operations: { list: async ({ engine }) => listReply(engine, 'name') },
  }),
  route({
    path: 'group/name/:name',
    summary: 'Read, create or update, or delete a group by name',
    fields: { ...groupFields, name: f.name('Group name') },
    operations: {
      read: async ({ engine, data }) => {
        const g = await engine.identity.groups.byName(data.name);
        if (!g) throw notFound();
        return { data: await groupView(engine.identity, g) };
      },
      update: async ({ engine, data }) => upsertReply(await engine.identity.upsertGroup(null, input(data))),
      delete: async ({ engine, data }) => {
        const g = await engine.identity.groups.byName(data.name);
        if (g) await engine.identity.deleteGroup(g.id);
        return undefined;
      },
    },
  }),
];
