/**
 * Changes to groups and group aliases through the identity API (hashicorp/vault
 * vault/identity_store_groups.go handleGroupUpdateCommon, identity_store_group_aliases.go
 * handleGroupAliasUpdateCommon). Member groups are stored as parents on the member (Vault's
 * ParentGroupIDs). Each runs under the identity store's write lock.
 */
import { randomUUID } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import type { AliasIds } from './entity-edits.js';
import { requireMount, type IdentityParts } from './parts.js';
import { NAME_RE, normalizeIdentityPolicies, type AliasRecord, type GroupRecord } from './records.js';

/** Fields of a group create or update (absent = unchanged). */
export interface GroupInput {
  name?: string;
  type?: string;
  metadata?: Record<string, string>;
  policies?: string[];
  member_entity_ids?: string[];
  member_group_ids?: string[];
}

/** Fields of a group alias create or update. */
export interface GroupAliasInput {
  id?: string;
  name?: string;
  mount_accessor?: string;
  canonical_id?: string;
}

/** A new group (internal unless told), named group_<id> until named. */
function blankGroup(now: string, type: GroupRecord['type'] = 'internal'): GroupRecord {
  const id = randomUUID();
  return {
    id,
    name: `group_${id}`,
    type,
    policies: [],
    metadata: {},
    member_entity_ids: [],
    parent_group_ids: [],
    alias: null,
    creation_time: now,
    last_update_time: now,
    modify_index: 0,
  };
}

/** `g` with one more change recorded. */
function touched(g: GroupRecord, now: string, change: Partial<GroupRecord>): GroupRecord {
  return { ...g, ...change, modify_index: g.modify_index + 1, last_update_time: now };
}

/** Unique non-empty ids. */
const idsOf = (list: readonly string[]) => [...new Set(list.filter((x) => x !== ''))];

/**
 * Create or update a group: `existingId` updates that group; else an existing `name` updates that group;
 * else a new group. A member list that would make a loop is refused. Answers the group and whether it
 * was created (Vault answers updates with 204).
 */
export async function upsertGroup(
  p: IdentityParts,
  existingId: string | null,
  input: GroupInput,
): Promise<{ group: GroupRecord; created: boolean }> {
  const graph = await p.groups.load();
  const prev = existingId ? graph.get(existingId) : input.name ? graph.byGroupName(input.name) : undefined;
  if (existingId && !prev) throw invalid('id', 'invalid group ID');
  const now = p.now();
  const g: GroupRecord = prev ? { ...prev } : blankGroup(now);
  if (input.policies) g.policies = normalizeIdentityPolicies(input.policies);
  if (g.policies.includes('root')) throw invalid('policies', 'policies cannot contain root');
  if (input.type) {
    if (prev && input.type !== prev.type) throw invalid('type', 'group type cannot be changed');
    if (input.type !== 'internal' && input.type !== 'external')
      throw invalid('type', `invalid group type "${input.type}"`);
    g.type = input.type;
  }
  if (input.name) {
    if (!NAME_RE.test(input.name)) throw invalid('name', 'must be 1-255 printable characters without "/"');
    const named = graph.byGroupName(input.name);
    if (named && named.id !== g.id) throw invalid('name', 'group name is already in use');
    g.name = input.name;
  }
  if (input.metadata) g.metadata = { ...input.metadata };
  if (input.member_entity_ids) {
    if (g.type === 'external')
      throw invalid('member_entity_ids', "member entities can't be set manually for external groups");
    const ids = idsOf(input.member_entity_ids);
    for (const id of ids)
      if (!(await p.entities.exact(id))) throw invalid('member_entity_ids', `invalid member entity ID "${id}"`);
    g.member_entity_ids = ids;
  }
  let children: string[] | null = null;
  if (input.member_group_ids) {
    if (g.type === 'external') throw invalid('member_group_ids', "member groups can't be set for external groups");
    children = idsOf(input.member_group_ids);
    for (const id of children) if (!graph.get(id)) throw invalid('member_group_ids', `invalid member group ID "${id}"`);
    const loop = graph.wouldCycle(g.id, children);
    if (loop) throw invalid('member_group_ids', `cyclic relationship detected for member group ID "${loop}"`);
  }
  await p.groups.write({ ...g, modify_index: (prev?.modify_index ?? 0) + 1, last_update_time: now });
  if (children) await setMemberGroups(p, g.id, children, now);
  return { group: graph.get(g.id)!, created: !prev };
}

/** Make exactly `children` the member groups of `parentId` (each child lists it among its parents). */
async function setMemberGroups(
  p: IdentityParts,
  parentId: string,
  children: readonly string[],
  now: string,
): Promise<void> {
  const graph = p.groups.now;
  const wanted = new Set(children);
  for (const c of graph.childrenOf(parentId)) {
    if (!wanted.has(c.id))
      await p.groups.write(touched(c, now, { parent_group_ids: c.parent_group_ids.filter((x) => x !== parentId) }));
  }
  for (const id of children) {
    const c = graph.get(id)!;
    if (!c.parent_group_ids.includes(parentId))
      await p.groups.write(touched(c, now, { parent_group_ids: [...c.parent_group_ids, parentId] }));
  }
}

/** Delete a group (nothing when it does not exist); its member groups lose it as a parent. */
export async function deleteGroup(p: IdentityParts, id: string): Promise<void> {
  const graph = await p.groups.load();
  if (!graph.get(id)) return;
  await setMemberGroups(p, id, [], p.now());
  await p.groups.remove(id);
}

/**
 * Create or update a group alias: a new alias without `canonical_id` gets a new external group. Null
 * when nothing changed (Vault's idempotent 204).
 */
export async function upsertGroupAlias(p: IdentityParts, input: GroupAliasInput): Promise<AliasIds | null> {
  const graph = await p.groups.load();
  const holder = input.id ? graph.byGroupAliasId(input.id) : undefined;
  if (input.id && !holder) throw invalid('id', 'invalid group alias ID');
  if (!input.name) throw invalid('name', 'missing alias name');
  if (!input.mount_accessor) throw invalid('mount_accessor', 'missing mount_accessor');
  const old = holder?.alias ?? null;
  if (
    old &&
    old.name === input.name &&
    old.mount_accessor === input.mount_accessor &&
    (!input.canonical_id || old.canonical_id === input.canonical_id)
  )
    return null;
  const target = input.canonical_id ? graph.get(input.canonical_id) : undefined;
  if (input.canonical_id) {
    if (!target) throw invalid('canonical_id', "invalid group ID given in 'canonical_id'");
    if (target.type !== 'external') throw invalid('canonical_id', "alias can't be set on an internal group");
    if (target.alias && target.alias.id !== old?.id) throw invalid('canonical_id', 'group already has an alias');
  }
  const mount = requireMount(p, input.mount_accessor);
  const taken = graph.byAliasFactors(mount.accessor, input.name);
  if (taken && taken.alias?.id !== old?.id)
    throw invalid('combination of mount and group alias name is already in use');
  const now = p.now();
  const group = target ?? holder ?? blankGroup(now, 'external');
  const alias: AliasRecord = {
    id: old?.id ?? randomUUID(),
    canonical_id: group.id,
    mount_accessor: mount.accessor,
    mount_path: mount.path,
    mount_type: mount.type,
    name: input.name,
    metadata: {},
    creation_time: old?.creation_time ?? now,
    last_update_time: now,
  };
  if (holder && holder.id !== group.id) await p.groups.write(touched(holder, now, { alias: null }));
  await p.groups.write(touched(group, now, { alias }));
  return { id: alias.id, canonical_id: group.id };
}

/** Delete a group alias (nothing when it does not exist). */
export async function deleteGroupAlias(p: IdentityParts, aliasId: string): Promise<void> {
  const g = (await p.groups.load()).byGroupAliasId(aliasId);
  if (g) await p.groups.write(touched(g, p.now(), { alias: null }));
}
