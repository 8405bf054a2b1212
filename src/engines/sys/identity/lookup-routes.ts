/**
 * identity/lookup/entity and identity/lookup/group: find one by id, name, alias id, or alias name and
 * mount accessor (hashicorp/vault vault/identity_store_lookup.go). Nothing found answers 204.
 */
import type { EntityRecord, GroupRecord } from '../../../auth/identity.js';
import { invalid } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { entityView, groupView, type IdentityStoreEngine } from './views.js';

const route = routesFor<IdentityStoreEngine>();

const lookupFields = (what: string) => ({
  id: f.string(`${what} id`),
  name: f.string(`${what} name`),
  alias_id: f.string('Alias id'),
  alias_name: f.string('Alias name (with alias_mount_accessor)'),
  alias_mount_accessor: f.string('Accessor of the alias mount'),
});

type Criteria = { id?: string; name?: string; alias_id?: string; alias_name?: string; alias_mount_accessor?: string };

/** Exactly one criterion (alias_name goes with alias_mount_accessor), as Vault requires. */
function criterion(data: Criteria): 'id' | 'name' | 'alias_id' | 'alias_name' {
  const given = (['id', 'name', 'alias_id', 'alias_name'] as const).filter((k) => data[k]);
  if (given.length === 0)
    throw invalid('one of id, name, alias_id, or alias_name and alias_mount_accessor must be provided');
  if (given.length > 1)
    throw invalid('only one of id, name, alias_id, or alias_name and alias_mount_accessor may be provided');
  if (given[0] === 'alias_name' && !data.alias_mount_accessor)
    throw invalid('alias_mount_accessor', "'alias_mount_accessor' needs to be set along with 'alias_name'");
  return given[0]!;
}

/** Routes of identity/lookup. */
export const lookupRoutes: AnyRoute[] = [
  route({
    path: 'lookup/entity',
    summary: 'Find an entity by id, name, alias id, or alias name and mount accessor',
    fields: lookupFields('Entity'),
    operations: {
      update: async ({ engine, data }) => {
        const s = engine.identity;
        let e: EntityRecord | null;
        switch (criterion(data)) {
          case 'id':
            e = await s.entity(data.id!);
            break;
          case 'name':
            e = await s.byName(data.name!);
            break;
          case 'alias_id':
            e = await s.byAliasId(data.alias_id!);
            break;
          default:
            e = await s.byAlias(data.alias_mount_accessor!, data.alias_name!);
        }
        return e ? { data: await entityView(s, e) } : undefined;
      },
    },
  }),
  route({
    path: 'lookup/group',
    summary: 'Find a group by id, name, alias id, or alias name and mount accessor',
    fields: lookupFields('Group'),
    operations: {
      update: async ({ engine, data }) => {
        const s = engine.identity;
        let g: GroupRecord | undefined;
        switch (criterion(data)) {
          case 'id':
            g = await s.groups.get(data.id!);
            break;
          case 'name':
            g = await s.groups.byName(data.name!);
            break;
          case 'alias_id':
            g = await s.groups.byAliasId(data.alias_id!);
            break;
          default:
            g = await s.groups.byAlias(data.alias_mount_accessor!, data.alias_name!);
        }
        return g ? { data: await groupView(s, g) } : undefined;
      },
    },
  }),
];
