/**
 * Identity records as Vault's identity API answers them (vault/identity_store_entities.go
 * handleEntityReadCommon, identity_store_aliases.go handleAliasReadCommon, identity_store_groups.go
 * handleGroupReadCommon, and the list handlers' key_info). Go's nil maps and slices print as null, so
 * empty ones here do too where Vault's would be nil.
 */
import type { AliasRecord, EntityRecord, GroupRecord, IdentityStore } from '../../../auth/identity.js';

/** What the identity routes are handed: the store (the core's part). */
export interface IdentityStoreEngine {
  readonly identity: IdentityStore;
}

const orNull = <T extends object>(v: T | undefined | null): T | null => (v && Object.keys(v).length ? v : null);
const listOrNull = <T>(v: readonly T[] | undefined): T[] | null => (v && v.length ? [...v] : null);

/** Live mount path and type of an alias (Vault ValidateMountByAccessor), else what was stored. */
function mountFields(store: IdentityStore, a: AliasRecord): { mount_path: string; mount_type: string } {
  const m = store.mountOf(a.mount_accessor);
  return { mount_path: m?.path ?? a.mount_path, mount_type: m?.type ?? a.mount_type };
}

/** An alias inside an entity read. */
export function aliasInEntity(store: IdentityStore, a: AliasRecord): Record<string, unknown> {
  return {
    canonical_id: a.canonical_id,
    creation_time: a.creation_time,
    custom_metadata: orNull(a.custom_metadata),
    id: a.id,
    last_update_time: a.last_update_time,
    local: false,
    merged_from_canonical_ids: listOrNull(a.merged_from_canonical_ids),
    metadata: orNull(a.metadata),
    mount_accessor: a.mount_accessor,
    ...mountFields(store, a),
    name: a.name,
  };
}

/** An alias read on its own (entity-alias/id/:id, group-alias/id/:id). */
export function aliasView(store: IdentityStore, a: AliasRecord): Record<string, unknown> {
  return { ...aliasInEntity(store, a), namespace_id: 'root' };
}

/** An entity read (entity/id/:id, entity/name/:name, lookup/entity). */
export async function entityView(store: IdentityStore, e: EntityRecord): Promise<Record<string, unknown>> {
  const { direct, inherited } = await store.groupsOf(e.id);
  return {
    aliases: e.aliases.map((a) => aliasInEntity(store, a)),
    creation_time: e.creation_time,
    direct_group_ids: direct,
    disabled: e.disabled,
    group_ids: [...new Set([...direct, ...inherited])].sort(),
    id: e.id,
    inherited_group_ids: inherited,
    last_update_time: e.last_update_time,
    merged_entity_ids: listOrNull(e.merged_entity_ids),
    metadata: orNull(e.metadata),
    name: e.name,
    namespace_id: 'root',
    policies: [...e.policies].sort(),
  };
}

/** A group read (group/id/:id, group/name/:name, lookup/group). */
export async function groupView(store: IdentityStore, g: GroupRecord): Promise<Record<string, unknown>> {
  return {
    alias: g.alias ? { ...aliasInEntity(store, g.alias), local: undefined, custom_metadata: undefined } : {},
    creation_time: g.creation_time,
    id: g.id,
    last_update_time: g.last_update_time,
    member_entity_ids: listOrNull(g.member_entity_ids),
    member_group_ids: listOrNull(await store.groups.memberGroupIds(g.id)),
    metadata: orNull(g.metadata),
    modify_index: g.modify_index,
    name: g.name,
    namespace_id: 'root',
    parent_group_ids: listOrNull(g.parent_group_ids),
    policies: listOrNull(g.policies),
    type: g.type,
  };
}

/** key_info of an entity list. */
export function entityListInfo(store: IdentityStore, e: EntityRecord): Record<string, unknown> {
  return {
    aliases: e.aliases.map((a) => ({
      id: a.id,
      mount_accessor: a.mount_accessor,
      name: a.name,
      ...mountFields(store, a),
    })),
    name: e.name,
  };
}

/** key_info of a group list. */
export function groupListInfo(store: IdentityStore, g: GroupRecord): Record<string, unknown> {
  const info: Record<string, unknown> = {
    name: g.name,
    num_member_entities: g.member_entity_ids.length,
    num_parent_groups: g.parent_group_ids.length,
  };
  if (g.alias)
    info.alias = {
      id: g.alias.id,
      mount_accessor: g.alias.mount_accessor,
      name: g.alias.name,
      ...mountFields(store, g.alias),
    };
  return info;
}

/** key_info of an alias list (entity-alias/id, group-alias/id). */
export function aliasListInfo(store: IdentityStore, a: AliasRecord): Record<string, unknown> {
  return {
    canonical_id: a.canonical_id,
    custom_metadata: orNull(a.custom_metadata),
    local: false,
    mount_accessor: a.mount_accessor,
    ...mountFields(store, a),
    name: a.name,
  };
}
