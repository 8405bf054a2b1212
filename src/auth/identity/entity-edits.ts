/**
 * Changes to entities and entity aliases through the identity API (hashicorp/vault
 * vault/identity_store_entities.go handleEntityUpdateCommon, mergeEntity; identity_store_aliases.go
 * handleAliasCreateUpdate). Each runs under the identity store's write lock.
 */
import { randomUUID } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import { planMerge } from './merge.js';
import { requireMount, type IdentityParts } from './parts.js';
import { NAME_RE, normalizeIdentityPolicies, type AliasRecord, type EntityRecord } from './records.js';

/** Fields of an entity create or update (absent = unchanged). */
export interface EntityInput {
  id?: string;
  name?: string;
  metadata?: Record<string, string>;
  policies?: string[];
  disabled?: boolean;
}

/** Fields of an entity alias create or update. */
export interface EntityAliasInput {
  id?: string;
  name?: string;
  mount_accessor?: string;
  canonical_id?: string;
  custom_metadata?: Record<string, string>;
}

/** The ids a Vault alias create or update answers. */
export interface AliasIds {
  id: string;
  canonical_id: string;
}

/** A new entity with no name yet (the caller names it). */
function blankEntity(id: string, now: string): EntityRecord {
  return {
    id,
    name: '',
    metadata: {},
    policies: [],
    aliases: [],
    creation_time: now,
    last_update_time: now,
    disabled: false,
  };
}

/** A copy whose aliases may be edited. */
function copyOf(e: EntityRecord): EntityRecord {
  return { ...e, aliases: e.aliases.map((a) => ({ ...a })) };
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/**
 * Create or update an entity: by id, else by name (an existing name updates that entity). Answers the
 * entity and whether it was created (Vault answers updates with 204).
 */
export async function upsertEntity(
  p: IdentityParts,
  input: EntityInput,
): Promise<{ entity: EntityRecord; created: boolean }> {
  let prev: EntityRecord | null = null;
  if (input.id) {
    prev = await p.entities.exact(input.id);
    if (!prev) throw invalid('id', 'entity not found from id');
  }
  if (input.name) {
    if (!NAME_RE.test(input.name)) throw invalid('name', 'must be 1-255 printable characters without "/"');
    const named = await p.entities.byName(input.name);
    if (named && !prev) prev = named;
    else if (named && prev && named.id !== prev.id) throw invalid('name', 'entity name is already in use');
  }
  const now = p.now();
  const next = prev ? copyOf(prev) : blankEntity(randomUUID(), now);
  delete next.group_names;
  if (input.name) next.name = input.name;
  if (!next.name) next.name = await p.entities.freshName(next.id);
  if (input.policies) next.policies = normalizeIdentityPolicies(input.policies).sort();
  if (next.policies.includes('root')) throw invalid('policies', 'policies cannot contain root');
  if (input.disabled !== undefined) next.disabled = input.disabled;
  if (input.metadata) next.metadata = { ...input.metadata };
  next.last_update_time = now;
  await p.entities.write(next, prev);
  return { entity: next, created: !prev };
}

/** Delete an entity, its aliases and its group memberships (nothing when it does not exist). */
export async function deleteEntity(p: IdentityParts, id: string): Promise<void> {
  const e = await p.entities.exact(id);
  if (!e) return;
  const graph = await p.groups.load();
  for (const g of graph.groupsWithMember(e.id)) {
    await p.groups.write({
      ...g,
      member_entity_ids: g.member_entity_ids.filter((x) => x !== e.id),
      last_update_time: p.now(),
      modify_index: g.modify_index + 1,
    });
  }
  await p.entities.remove(e);
}

/** Merge entities into `toId` (identity/entity/merge); the plan is merge.ts. */
export async function mergeEntities(
  p: IdentityParts,
  fromIds: readonly string[],
  toId: string,
  keepAliasIds: readonly string[],
): Promise<void> {
  if (!toId) throw invalid('to_entity_id', 'missing entity id to merge to');
  if (fromIds.length === 0) throw invalid('from_entity_ids', 'missing entity ids to merge from');
  const to = await p.entities.exact(toId);
  if (!to) throw invalid('to_entity_id', 'entity id to merge to is invalid');
  const from: EntityRecord[] = [];
  for (const id of new Set(fromIds)) {
    if (id === toId) throw invalid('from_entity_ids', 'to_entity_id should not be present in from_entity_ids');
    const f = await p.entities.exact(id);
    if (!f) throw invalid('from_entity_ids', `entity id to merge from is invalid: ${id}`);
    from.push(f);
  }
  const plan = planMerge(to, from, keepAliasIds, p.now());
  const graph = await p.groups.load();
  for (const f of from) {
    // Memberships move to the surviving entity (Vault mergeEntity).
    for (const g of graph.groupsWithMember(f.id)) {
      const members = [...new Set(g.member_entity_ids.map((x) => (x === f.id ? to.id : x)))];
      await p.groups.write({
        ...g,
        member_entity_ids: members,
        last_update_time: p.now(),
        modify_index: g.modify_index + 1,
      });
    }
    // Its moved aliases keep their ids: the write of `to` below points their indexes at it.
    await p.entities.remove({ ...f, aliases: f.aliases.filter((a) => plan.droppedAliases.includes(a)) });
    await p.entities.redirect(f.id, to.id);
  }
  for (const a of plan.droppedAliases) if (a.canonical_id === to.id) await p.entities.dropAlias(a, to.id);
  await p.entities.write(plan.to, { ...to, aliases: [] });
}

/**
 * Create or update an entity alias: by id; else an alias with the same name on the same mount is
 * updated; else a new alias, on `canonical_id` or on a new entity. Null when nothing changed (204).
 */
export async function upsertEntityAlias(p: IdentityParts, input: EntityAliasInput): Promise<AliasIds | null> {
  if (input.id) {
    const owner = await p.entities.byAliasId(input.id);
    if (!owner) throw invalid('id', 'invalid alias ID provided');
    return updateAlias(p, owner, owner.aliases.find((a) => a.id === input.id)!, input);
  }
  if (!input.name) throw invalid('name', 'missing alias name');
  const mount = requireMount(p, input.mount_accessor);
  const existing = await p.entities.byAlias(mount.accessor, input.name);
  const same = existing?.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === input.name);
  if (existing && same) return updateAlias(p, existing, same, input);
  let entity: EntityRecord | null = null;
  if (input.canonical_id) {
    entity = await p.entities.exact(input.canonical_id);
    if (!entity) throw invalid('canonical_id', 'invalid canonical ID');
  }
  if (entity?.aliases.some((x) => x.mount_accessor === mount.accessor))
    throw invalid('Alias already exists for requested entity and mount accessor');
  const now = p.now();
  const next = entity ? { ...copyOf(entity), last_update_time: now } : blankEntity(randomUUID(), now);
  if (!next.name) next.name = await p.entities.freshName(next.id);
  const alias: AliasRecord = {
    id: randomUUID(),
    canonical_id: next.id,
    mount_accessor: mount.accessor,
    mount_path: mount.path,
    mount_type: mount.type,
    name: input.name,
    metadata: {},
    custom_metadata: input.custom_metadata ?? {},
    creation_time: now,
    last_update_time: now,
  };
  next.aliases.push(alias);
  await p.entities.write(next, entity);
  return { id: alias.id, canonical_id: next.id };
}

async function updateAlias(
  p: IdentityParts,
  owner: EntityRecord,
  alias: AliasRecord,
  input: EntityAliasInput,
): Promise<AliasIds | null> {
  const name = input.name || alias.name;
  const accessor = input.mount_accessor || alias.mount_accessor;
  const target = input.canonical_id || owner.id;
  const sameCustom = input.custom_metadata === undefined || sameMap(input.custom_metadata, alias.custom_metadata ?? {});
  if (name === alias.name && accessor === alias.mount_accessor && target === owner.id && sameCustom) return null;
  const mount = requireMount(p, accessor);
  if (name !== alias.name || accessor !== alias.mount_accessor) {
    if (await p.entities.byAlias(accessor, name))
      throw invalid('alias with combination of mount accessor and name already exists');
  }
  const now = p.now();
  const moved: AliasRecord = {
    ...alias,
    name,
    mount_accessor: accessor,
    mount_path: mount.path,
    mount_type: mount.type,
    last_update_time: now,
  };
  if (input.custom_metadata !== undefined) moved.custom_metadata = { ...input.custom_metadata };
  if (target === owner.id) {
    if (owner.aliases.some((x) => x.id !== alias.id && x.mount_accessor === accessor)) {
      throw invalid("Alias cannot be updated as the entity already has an alias for the given 'mount_accessor'");
    }
    await p.entities.write(
      { ...owner, aliases: owner.aliases.map((x) => (x.id === alias.id ? moved : { ...x })), last_update_time: now },
      owner,
    );
    return { id: alias.id, canonical_id: owner.id };
  }
  const dest = await p.entities.exact(target);
  if (!dest) throw invalid('canonical_id', 'invalid new entity ID');
  if (dest.aliases.some((x) => x.mount_accessor === accessor))
    throw invalid('Alias cannot be updated as the given entity already has an alias for this mount');
  moved.canonical_id = dest.id;
  await p.entities.write(
    { ...owner, aliases: owner.aliases.filter((x) => x.id !== alias.id), last_update_time: now },
    owner,
  );
  await p.entities.write({ ...dest, aliases: [...dest.aliases, moved], last_update_time: now }, dest);
  return { id: alias.id, canonical_id: dest.id };
}

/** Delete an entity alias (nothing when it does not exist). */
export async function deleteEntityAlias(p: IdentityParts, aliasId: string): Promise<void> {
  const owner = await p.entities.byAliasId(aliasId);
  if (!owner) return;
  await p.entities.write(
    { ...owner, aliases: owner.aliases.filter((a) => a.id !== aliasId), last_update_time: p.now() },
    owner,
  );
}
