/**
 * The entity of a login (hashicorp/vault vault/identity_store_util.go CreateOrFetchEntity): found by the
 * alias (auth mount + name) or created with it; the alias metadata refreshed from the method; the
 * entity's memberships of external groups on that mount set from the group names the method reported
 * (refreshExternalGroupMembershipsByEntityID).
 */
import { randomUUID } from 'node:crypto';
import type { IdentityParts } from './parts.js';
import type { AliasMount, EntityRecord } from './records.js';

/** What an auth method reports of the person or machine that logged in. */
export interface LoginAlias {
  name: string;
  metadata?: Record<string, string>;
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** External groups on `accessor` the entity should be in, given the group names its login reported. */
function externalTargets(p: IdentityParts, accessor: string, groupNames: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const n of groupNames) {
    const g = p.groups.now.byAliasFactors(accessor, n);
    if (g?.type === 'external') out.add(g.id);
  }
  return out;
}

/** External groups on `accessor` the entity is in now. */
function externalCurrent(p: IdentityParts, entityId: string, accessor: string): Set<string> {
  const out = new Set<string>();
  for (const g of p.groups.now.groupsWithMember(entityId))
    if (g.type === 'external' && g.alias?.mount_accessor === accessor) out.add(g.id);
  return out;
}

/** The entity of a repeat login when it has nothing to change, from memory only; else undefined. */
export function unchangedLoginEntity(
  p: IdentityParts,
  mount: AliasMount,
  alias: LoginAlias,
  groups: readonly string[],
): EntityRecord | undefined {
  if (!p.groups.ready) return undefined;
  const e = p.entities.cachedByAlias(mount.accessor, alias.name);
  const a = e?.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === alias.name);
  if (!e || !a || !sameMap(a.metadata, alias.metadata ?? {})) return undefined;
  return sameSet(externalTargets(p, mount.accessor, groups), externalCurrent(p, e.id, mount.accessor)) ? e : undefined;
}

/** Find or create the entity of a login and bring its alias and external groups up to date. */
export async function loginEntity(
  p: IdentityParts,
  mount: AliasMount,
  alias: LoginAlias,
  groups: readonly string[],
): Promise<EntityRecord> {
  await p.groups.load();
  const prev = await p.entities.byAlias(mount.accessor, alias.name);
  const now = p.now();
  let entity: EntityRecord;
  if (prev) entity = { ...prev, aliases: prev.aliases.map((x) => ({ ...x })) };
  else {
    const id = randomUUID();
    entity = {
      id,
      name: await p.entities.freshName(id),
      metadata: {},
      policies: [],
      aliases: [],
      creation_time: now,
      last_update_time: now,
      disabled: false,
    };
  }
  let a = entity.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === alias.name);
  let changed = !prev;
  if (!a) {
    a = {
      id: randomUUID(),
      canonical_id: entity.id,
      mount_accessor: mount.accessor,
      mount_path: mount.path,
      mount_type: mount.type,
      name: alias.name,
      metadata: alias.metadata ?? {},
      custom_metadata: {},
      creation_time: now,
      last_update_time: now,
    };
    entity.aliases.push(a);
    changed = true;
  } else if (!sameMap(a.metadata, alias.metadata ?? {})) {
    a.metadata = alias.metadata ?? {};
    a.last_update_time = now;
    changed = true;
  }
  if (entity.group_names) {
    delete entity.group_names;
    changed = true;
  }
  if (changed) {
    entity.last_update_time = now;
    await p.entities.write(entity, prev);
  }
  await refreshExternalGroups(p, entity.id, mount.accessor, groups);
  return p.entities.cached(entity.id) ?? entity;
}

async function refreshExternalGroups(
  p: IdentityParts,
  entityId: string,
  accessor: string,
  groupNames: readonly string[],
): Promise<void> {
  const want = externalTargets(p, accessor, groupNames);
  const have = externalCurrent(p, entityId, accessor);
  if (sameSet(want, have)) return;
  const now = p.now();
  const graph = p.groups.now;
  for (const id of have) {
    if (want.has(id)) continue;
    const g = graph.get(id)!;
    await p.groups.write({
      ...g,
      member_entity_ids: g.member_entity_ids.filter((x) => x !== entityId),
      modify_index: g.modify_index + 1,
      last_update_time: now,
    });
  }
  for (const id of want) {
    if (have.has(id)) continue;
    const g = graph.get(id)!;
    await p.groups.write({
      ...g,
      member_entity_ids: [...g.member_entity_ids, entityId],
      modify_index: g.modify_index + 1,
      last_update_time: now,
    });
  }
}
