/**
 * identity/entity: create, update, read, delete and list entities by id and by name, batch-delete and
 * merge (hashicorp/vault vault/identity_store_entities.go). Creating answers the new id, name and
 * alias ids; updating an existing entity answers 204, as Vault does.
 */
import type { EntityRecord } from '../../../auth/identity.js';
import { invalid, notFound } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { kvPairs } from './kv-pairs.js';
import { entityListInfo, entityView, type IdentityStoreEngine } from './views.js';

const route = routesFor<IdentityStoreEngine>();

const entityFields = {
  name: f.string('Name of the entity'),
  metadata: f.any('Metadata (string keys and values) of the entity (an object, or key=value strings)'),
  policies: f.strings('Policies of the entity; they apply to every token of the entity'),
  disabled: f.bool("Refuse the entity's tokens (they are not revoked)"),
};

/** 200 with the new entity's id, name and alias ids when created, 204 when updated. */
function upsertReply(r: { entity: EntityRecord; created: boolean }) {
  if (!r.created) return undefined;
  return {
    data: {
      aliases: r.entity.aliases.length ? r.entity.aliases.map((a) => a.id) : null,
      id: r.entity.id,
      name: r.entity.name,
    },
  };
}

async function listReply(engine: IdentityStoreEngine, by: 'id' | 'name') {
  const entities = await engine.identity.entities.list();
  const info: Record<string, unknown> = {};
  for (const e of entities) info[e.id] = entityListInfo(engine.identity, e);
  const keys = entities.map((e) => (by === 'id' ? e.id : e.name));
  if (by === 'name') keys.sort();
  return { data: { keys, key_info: info } };
}

/** Routes of identity/entity. */
export const entityRoutes: AnyRoute[] = [
  route({
    path: 'entity',
    summary: 'Create an entity, or update one given by id or by an existing name',
    fields: { id: f.string('Id of an entity to update'), ...entityFields },
    operations: {
      update: async ({ engine, data }) =>
        upsertReply(await engine.identity.upsertEntity({ ...data, metadata: kvPairs('metadata', data.metadata) })),
    },
  }),
  route({
    path: 'entity/id',
    summary: 'List entity ids',
    fields: {},
    operations: { list: async ({ engine }) => listReply(engine, 'id') },
  }),
  route({
    path: 'entity/id/:id',
    summary: 'Read, update or delete an entity by id',
    fields: { id: f.name('Entity id'), ...entityFields },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.entity(data.id);
        if (!e || e.id !== data.id) throw notFound();
        return { data: await entityView(engine.identity, e) };
      },
      update: async ({ engine, data }) =>
        upsertReply(await engine.identity.upsertEntity({ ...data, metadata: kvPairs('metadata', data.metadata) })),
      delete: async ({ engine, data }) => {
        await engine.identity.deleteEntity(data.id);
        return undefined;
      },
    },
  }),
  route({
    path: 'entity/name',
    summary: 'List entity names',
    fields: {},
    operations: { list: async ({ engine }) => listReply(engine, 'name') },
  }),
  route({
    path: 'entity/name/:name',
    summary: 'Read, create or update, or delete an entity by name',
    fields: { ...entityFields, name: f.name('Entity name') },
    operations: {
      read: async ({ engine, data }) => {
        const e = await engine.identity.byName(data.name);
        if (!e) throw notFound();
        return { data: await entityView(engine.identity, e) };
      },
      update: async ({ engine, data }) =>
        upsertReply(await engine.identity.upsertEntity({ ...data, metadata: kvPairs('metadata', data.metadata) })),
      delete: async ({ engine, data }) => {
        await engine.identity.deleteEntityByName(data.name);
        return undefined;
      },
    },
  }),
  route({
    path: 'entity/batch-delete',
    summary: 'Delete many entities by id',
    fields: { entity_ids: f.strings('Ids of the entities to delete').required() },
    operations: {
      update: async ({ engine, data }) => {
        await engine.identity.batchDelete(data.entity_ids);
        return undefined;
      },
    },
  }),
  route({
    path: 'entity/merge',
    summary: 'Merge entities into one: their aliases move to it',
    fields: {
      from_entity_ids: f.strings('Ids of the entities to merge from'),
      to_entity_id: f.string('Id of the entity to merge into'),
      force: f.bool('Accepted for compatibility (MFA secrets are not merged here)'),
      conflicting_alias_ids_to_keep: f.strings('Alias ids to keep where two entities have an alias on the same mount'),
    },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.to_entity_id) throw invalid('to_entity_id', 'missing entity id to merge to');
        await engine.identity.merge(
          data.from_entity_ids ?? [],
          data.to_entity_id,
          data.conflicting_alias_ids_to_keep ?? [],
        );
        return undefined;
      },
    },
  }),
];
