/**
 * Identity store: entities and their aliases, groups and group aliases (Vault vault/identity_store*.go).
 * Logins find or create the entity of (auth mount, alias name) (CreateOrFetchEntity) and refresh the
 * alias metadata and the external groups the method reports; the identity API edits the same records.
 * A token's identity (templating fields, identity policies of the entity and its groups, direct and
 * inherited) is computed once per entity and kept until an entity or group changes, so the request
 * hot path reads a map.
 *
 * Records live behind the barrier (records.ts names the keys). Entities are read on demand and cached;
 * groups are few and held in memory whole (group-graph.ts), as Vault's MemDB holds them.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, TokenIdentity } from '../framework/context.js';
import { invalid } from '../framework/errors.js';
import { KeyedLock } from '../framework/keyed-lock.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { GroupGraph } from './identity/group-graph.js';
import { planMerge } from './identity/merge.js';
import {
  ID_RE,
  NAME_RE,
  keys,
  normalizeIdentityPolicies,
  timestamp,
  type AliasMount,
  type AliasRecord,
  type EntityRecord,
  type GroupRecord,
  type MountResolver,
} from './identity/records.js';
import { tokenView } from './identity/token-view.js';

export type {
  AliasMount,
  AliasRecord,
  EntityRecord,
  GroupRecord,
  GroupType,
  MountResolver,
} from './identity/records.js';

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

/** Same key/value pairs (order does not matter). */
function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** Entity merges followed at most this deep (a merged entity's id points at the one it became). */
const MERGE_DEPTH = 16;

/** Entities, aliases and groups. */
export class IdentityStore {
  private readonly cache = new Map<string, EntityRecord>();
  /** Alias index key -> entity id, as read or written (a repeat login reads no storage). */
  private readonly aliases = new Map<string, string>();
  /** Token views by entity id (the id a token carries), dropped on every change. */
  private readonly views = new Map<string, TokenIdentity>();
  private groups = new GroupGraph();
  private groupsLoading: Promise<void> | null = null;
  private groupsReady = false;
  /** Bumped by every change and by clear(): work begun under an older value does not fill caches. */
  private generation = 0;
  /** One writer at a time (logins that change something, and the identity API). */
  private readonly lock = new KeyedLock();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly mounts: MountResolver = () => undefined,
  ) {}

  private now(): string {
    return timestamp(this.clock.now());
  }

  /** Something changed: token views (identity policies, templating) are recomputed on next use. */
  private changed(): void {
    this.generation++;
    this.views.clear();
  }

  /** Forget everything cached (seal, or another daemon changed storage). */
  clear(): void {
    this.generation++;
    this.cache.clear();
    this.aliases.clear();
    this.views.clear();
    this.groups = new GroupGraph();
    this.groupsLoading = null;
    this.groupsReady = false;
  }

  // ---- groups in memory ---------------------------------------------------------------------

  private loadGroups(): Promise<void> {
    if (this.groupsReady) return Promise.resolve();
    if (!this.groupsLoading) {
      const gen = this.generation;
      const graph = new GroupGraph();
      this.groupsLoading = (async () => {
        for (const name of await this.storage.list('group/')) {
          if (name.endsWith('/')) continue;
          const g = await getJSON<GroupRecord>(this.storage, `group/${name}`);
          if (g) graph.put(g);
        }
        if (gen === this.generation) {
          this.groups = graph;
          this.groupsReady = true;
        }
      })();
      this.groupsLoading.catch(() => (this.groupsLoading = null));
    }
    return this.groupsLoading.then(() => (this.groupsReady ? undefined : this.loadGroups()));
  }

  private async writeGroup(g: GroupRecord): Promise<void> {
    await putJSON(this.storage, keys.group(g.id), g);
    this.groups.put(g);
  }

  // ---- reads ------------------------------------------------------------------------------------

  /** An entity by id (a merged entity's id gives the entity it became), or null. */
  async entity(id: string): Promise<EntityRecord | null> {
    for (let i = 0; i < MERGE_DEPTH && ID_RE.test(id); i++) {
      const hit = this.cache.get(id);
      if (hit) return hit;
      const gen = this.generation;
      const e = await getJSON<EntityRecord>(this.storage, keys.entity(id));
      if (e) {
        if (gen === this.generation) this.cache.set(id, e);
        return e;
      }
      const merged = await getJSON<{ entity_id: string }>(this.storage, keys.merged(id));
      if (!merged) return null;
      id = merged.entity_id;
    }
    return null;
  }

  /** An entity by exactly its id (no merge redirection), or null. */
  private async entityExact(id: string): Promise<EntityRecord | null> {
    const e = await this.entity(id);
    return e && e.id === id ? e : null;
  }

  /** An entity by name, or null. */
  async byName(name: string): Promise<EntityRecord | null> {
    if (!NAME_RE.test(name)) return null;
    const ref = await getJSON<{ entity_id: string }>(this.storage, keys.entityName(name));
    return ref ? this.entity(ref.entity_id) : null;
  }

  /** The entity owning alias id `aliasId`, or null. */
  async byAliasId(aliasId: string): Promise<EntityRecord | null> {
    if (!ID_RE.test(aliasId)) return null;
    const ref = await getJSON<{ entity_id: string }>(this.storage, keys.aliasId(aliasId));
    const e = ref ? await this.entity(ref.entity_id) : null;
    return e && e.aliases.some((a) => a.id === aliasId) ? e : null;
  }

  /** The entity of alias `name` on the mount with `mountAccessor`, or null. */
  async byAlias(mountAccessor: string, name: string): Promise<EntityRecord | null> {
    const ref = await getJSON<{ entity_id: string }>(this.storage, keys.alias(mountAccessor, name));
    return ref ? this.entity(ref.entity_id) : null;
  }

  /** Ids of all entities, sorted. */
  async listIds(): Promise<string[]> {
    return (await this.storage.list('entity/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** All entities, by id order. */
  async listEntities(): Promise<EntityRecord[]> {
    const out: EntityRecord[] = [];
    for (const id of await this.listIds()) {
      const e = await this.entityExact(id);
      if (e) out.push(e);
    }
    return out;
  }

  /** Ids of all entity aliases, sorted. */
  async listAliasIds(): Promise<string[]> {
    return (await this.storage.list('alias-id/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** The live mount of an accessor (undefined when none has it). */
  mountOf(accessor: string): AliasMount | undefined {
    return this.mounts(accessor);
  }

  /** A group by id, or undefined. */
  async group(id: string): Promise<GroupRecord | undefined> {
    await this.loadGroups();
    return this.groups.get(id);
  }

  /** A group by name (case-insensitive, as Vault), or undefined. */
  async groupByName(name: string): Promise<GroupRecord | undefined> {
    await this.loadGroups();
    return this.groups.byGroupName(name);
  }

  /** The group holding group alias `aliasId`, or undefined. */
  async groupByAliasId(aliasId: string): Promise<GroupRecord | undefined> {
    await this.loadGroups();
    return this.groups.byGroupAliasId(aliasId);
  }

  /** The external group whose alias is `name` on `mountAccessor`, or undefined. */
  async groupByAlias(mountAccessor: string, name: string): Promise<GroupRecord | undefined> {
    await this.loadGroups();
    return this.groups.byAliasFactors(mountAccessor, name);
  }

  /** Every group, sorted by id. */
  async listGroups(): Promise<GroupRecord[]> {
    await this.loadGroups();
    return [...this.groups.all()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Ids of the groups that are members of `groupId` (their parents include it). */
  async memberGroupIds(groupId: string): Promise<string[]> {
    await this.loadGroups();
    return this.groups.childrenOf(groupId).map((g) => g.id);
  }

  /** Direct and inherited group ids of an entity (Vault's direct_group_ids, inherited_group_ids). */
  async groupsOf(entityId: string): Promise<{ direct: string[]; inherited: string[] }> {
    await this.loadGroups();
    const e = await this.entity(entityId);
    const g = this.groups.groupsOfEntity(e?.id ?? entityId);
    return { direct: g.direct.map((x) => x.id), inherited: g.inherited.map((x) => x.id) };
  }

  /** Every group the entity belongs to, directly or through a parent group, sorted (MFA enforcement, templating). */
  async groupIdsOf(entityId: string): Promise<string[]> {
    const { direct, inherited } = await this.groupsOf(entityId);
    return [...new Set([...direct, ...inherited])].sort();
  }

  // ---- token views --------------------------------------------------------------------------

  /** The identity of a token's entity (templating view and identity policies), or null. */
  async tokenIdentity(entityId: string): Promise<TokenIdentity | null> {
    const hit = this.views.get(entityId);
    if (hit) return hit;
    const gen = this.generation;
    await this.loadGroups();
    const e = await this.entity(entityId);
    if (!e) return null;
    const view = tokenView(e, this.groups.groupsOfEntity(e.id));
    if (gen === this.generation) this.views.set(entityId, view);
    return view;
  }

  /**
   * The identity from memory only: undefined when the entity or the groups are not loaded (the caller
   * then awaits tokenIdentity). The same object is answered until something changes, so callers may
   * key caches on it.
   */
  cachedTokenIdentity(entityId: string): TokenIdentity | undefined {
    const hit = this.views.get(entityId);
    if (hit || !this.groupsReady) return hit;
    const e = this.cache.get(entityId);
    if (!e) return undefined;
    const view = tokenView(e, this.groups.groupsOfEntity(e.id));
    this.views.set(entityId, view);
    return view;
  }

  // ---- writes: entities -----------------------------------------------------------------------

  /** Persist `next` (and its indexes), dropping the indexes `prev` had that `next` has not. */
  private async writeEntity(next: EntityRecord, prev: EntityRecord | null): Promise<void> {
    const writes: Array<Promise<void>> = [putJSON(this.storage, keys.entity(next.id), next)];
    if (!prev || prev.name !== next.name)
      writes.push(putJSON(this.storage, keys.entityName(next.name), { entity_id: next.id }));
    for (const a of next.aliases) {
      const old = prev?.aliases.find((x) => x.id === a.id);
      if (old && old.mount_accessor === a.mount_accessor && old.name === a.name) continue;
      writes.push(putJSON(this.storage, keys.alias(a.mount_accessor, a.name), { entity_id: next.id }));
      writes.push(putJSON(this.storage, keys.aliasId(a.id), { entity_id: next.id }));
    }
    await Promise.all(writes);
    if (prev) {
      if (prev.name !== next.name) await this.dropNameIndex(prev.name, prev.id);
      for (const a of prev.aliases) {
        const now = next.aliases.find((x) => x.id === a.id);
        if (!now) await this.dropAliasIndexes(a, prev.id);
        else if (now.mount_accessor !== a.mount_accessor || now.name !== a.name) await this.dropFactorIndex(a, prev.id);
      }
    }
    this.cache.set(next.id, next);
    for (const a of next.aliases) this.aliases.set(keys.alias(a.mount_accessor, a.name), next.id);
    this.changed();
  }

  private async dropNameIndex(name: string, entityId: string): Promise<void> {
    const ref = await getJSON<{ entity_id: string }>(this.storage, keys.entityName(name));
    if (ref?.entity_id === entityId) await this.storage.delete(keys.entityName(name));
  }

  private async dropFactorIndex(a: AliasRecord, entityId: string): Promise<void> {
    const k = keys.alias(a.mount_accessor, a.name);
    this.aliases.delete(k);
    const ref = await getJSON<{ entity_id: string }>(this.storage, k);
    if (ref?.entity_id === entityId) await this.storage.delete(k);
  }

  private async dropAliasIndexes(a: AliasRecord, entityId: string): Promise<void> {
    await this.dropFactorIndex(a, entityId);
    await this.storage.delete(keys.aliasId(a.id));
  }

  /** A fresh entity name that no entity has (Vault names unnamed entities entity_<8 hex>). */
  private async freshName(id: string): Promise<string> {
    let name = `entity_${id.slice(0, 8)}`;
    while (await this.byName(name)) name = `entity_${randomUUID().slice(0, 8)}`;
    return name;
  }

  /**
   * Create or update an entity (vault handleEntityUpdateCommon): by id, else by name (an existing name
   * updates that entity). Answers the entity and whether it was created (updates answer 204 in Vault).
   */
  async upsertEntity(input: EntityInput): Promise<{ entity: EntityRecord; created: boolean }> {
    return this.lock.run('w', async () => {
      let prev: EntityRecord | null = null;
      if (input.id) {
        prev = await this.entityExact(input.id);
        if (!prev) throw invalid('id', 'entity not found from id');
      }
      if (input.name !== undefined && input.name !== '') {
        if (!NAME_RE.test(input.name)) throw invalid('name', 'must be 1-255 printable characters without "/"');
        const named = await this.byName(input.name);
        if (named && !prev) prev = named;
        else if (named && named.id !== prev!.id) throw invalid('name', 'entity name is already in use');
      }
      const now = this.now();
      const id = prev?.id ?? randomUUID();
      const next: EntityRecord = prev
        ? { ...prev, aliases: prev.aliases.map((a) => ({ ...a })) }
        : {
            id,
            name: '',
            metadata: {},
            policies: [],
            aliases: [],
            creation_time: now,
            last_update_time: now,
            disabled: false,
          };
      delete next.group_names;
      if (input.name) next.name = input.name;
      if (!next.name) next.name = await this.freshName(id);
      if (input.policies) next.policies = normalizeIdentityPolicies(input.policies).sort();
      if (next.policies.includes('root')) throw invalid('policies', 'policies cannot contain root');
      if (input.disabled !== undefined) next.disabled = input.disabled;
      if (input.metadata) next.metadata = { ...input.metadata };
      next.last_update_time = now;
      await this.writeEntity(next, prev);
      return { entity: next, created: !prev };
    });
  }

  /** Delete an entity, its aliases, and its memberships (no error when it does not exist). */
  async deleteEntity(id: string): Promise<void> {
    await this.lock.run('w', () => this.deleteEntityLocked(id));
  }

  /** Delete an entity by name. */
  async deleteEntityByName(name: string): Promise<void> {
    await this.lock.run('w', async () => {
      const e = await this.byName(name);
      if (e) await this.deleteEntityLocked(e.id);
    });
  }

  /** Delete many entities (identity/entity/batch-delete). */
  async batchDelete(ids: readonly string[]): Promise<void> {
    await this.lock.run('w', async () => {
      for (const id of ids) await this.deleteEntityLocked(id);
    });
  }

  private async deleteEntityLocked(id: string): Promise<void> {
    const e = await this.entityExact(id);
    if (!e) return;
    await this.loadGroups();
    for (const g of this.groups.groupsWithMember(e.id)) {
      await this.writeGroup({
        ...g,
        member_entity_ids: g.member_entity_ids.filter((x) => x !== e.id),
        last_update_time: this.now(),
        modify_index: g.modify_index + 1,
      });
    }
    for (const a of e.aliases) await this.dropAliasIndexes(a, e.id);
    await this.dropNameIndex(e.name, e.id);
    await this.storage.delete(keys.entity(e.id));
    this.cache.delete(e.id);
    this.changed();
  }

  /** Merge entities into one (identity/entity/merge); see identity/merge.ts. */
  async merge(fromIds: readonly string[], toId: string, keepAliasIds: readonly string[]): Promise<void> {
    await this.lock.run('w', async () => {
      if (!toId) throw invalid('to_entity_id', 'missing entity id to merge to');
      if (fromIds.length === 0) throw invalid('from_entity_ids', 'missing entity ids to merge from');
      const to = await this.entityExact(toId);
      if (!to) throw invalid('to_entity_id', 'entity id to merge to is invalid');
      const from: EntityRecord[] = [];
      for (const id of new Set(fromIds)) {
        if (id === toId) throw invalid('from_entity_ids', 'to_entity_id should not be present in from_entity_ids');
        const f = await this.entityExact(id);
        if (!f) throw invalid('from_entity_ids', `entity id to merge from is invalid: ${id}`);
        from.push(f);
      }
      const plan = planMerge(to, from, keepAliasIds, this.now());
      await this.loadGroups();
      for (const f of from) {
        // Memberships move to the surviving entity.
        for (const g of this.groups.groupsWithMember(f.id)) {
          const members = [...new Set(g.member_entity_ids.map((x) => (x === f.id ? to.id : x)))];
          await this.writeGroup({
            ...g,
            member_entity_ids: members,
            last_update_time: this.now(),
            modify_index: g.modify_index + 1,
          });
        }
        await this.dropNameIndex(f.name, f.id);
        await this.storage.delete(keys.entity(f.id));
        await putJSON(this.storage, keys.merged(f.id), { entity_id: to.id });
        this.cache.delete(f.id);
      }
      for (const a of plan.droppedAliases) await this.dropAliasIndexes(a, a.canonical_id);
      // Moved aliases keep their ids and factors: their indexes are rewritten to point at `to`.
      await this.writeEntity(plan.to, { ...to, aliases: [] });
    });
  }

  // ---- writes: entity aliases -----------------------------------------------------------------

  private requireMount(accessor: string | undefined): AliasMount {
    if (!accessor) throw invalid('mount_accessor', 'missing mount_accessor');
    const m = this.mounts(accessor);
    if (!m) throw invalid('mount_accessor', `invalid mount accessor "${accessor}"`);
    return m;
  }

  /**
   * Create or update an entity alias (vault handleAliasCreateUpdate): by id; else an alias with the same
   * name on the same mount is updated; else a new alias, on `canonical_id` or on a new entity. Answers
   * null when nothing changed (Vault's idempotent 204).
   */
  async upsertEntityAlias(input: EntityAliasInput): Promise<{ id: string; canonical_id: string } | null> {
    return this.lock.run('w', async () => {
      if (input.id) {
        const owner = await this.byAliasId(input.id);
        if (!owner) throw invalid('id', 'invalid alias ID provided');
        return this.updateAlias(owner, owner.aliases.find((a) => a.id === input.id)!, input);
      }
      if (!input.name) throw invalid('name', 'missing alias name');
      const mount = this.requireMount(input.mount_accessor);
      const existing = await this.byAlias(mount.accessor, input.name);
      const a = existing?.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === input.name);
      if (existing && a) return this.updateAlias(existing, a, input);
      let entity: EntityRecord | null = null;
      if (input.canonical_id) {
        entity = await this.entityExact(input.canonical_id);
        if (!entity) throw invalid('canonical_id', 'invalid canonical ID');
      }
      if (entity?.aliases.some((x) => x.mount_accessor === mount.accessor))
        throw invalid('Alias already exists for requested entity and mount accessor');
      const now = this.now();
      const prev = entity;
      const next: EntityRecord = entity
        ? { ...entity, aliases: entity.aliases.map((x) => ({ ...x })), last_update_time: now }
        : {
            id: randomUUID(),
            name: '',
            metadata: {},
            policies: [],
            aliases: [],
            creation_time: now,
            last_update_time: now,
            disabled: false,
          };
      if (!next.name) next.name = await this.freshName(next.id);
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
      await this.writeEntity(next, prev);
      return { id: alias.id, canonical_id: next.id };
    });
  }

  private async updateAlias(
    owner: EntityRecord,
    alias: AliasRecord,
    input: EntityAliasInput,
  ): Promise<{ id: string; canonical_id: string } | null> {
    const name = input.name || alias.name;
    const accessor = input.mount_accessor || alias.mount_accessor;
    const target = input.canonical_id || owner.id;
    const sameCustom =
      input.custom_metadata === undefined || sameMap(input.custom_metadata, alias.custom_metadata ?? {});
    if (name === alias.name && accessor === alias.mount_accessor && target === owner.id && sameCustom) return null;
    const mount = this.requireMount(accessor);
    if (name !== alias.name || accessor !== alias.mount_accessor) {
      const taken = await this.byAlias(accessor, name);
      if (taken && taken.aliases.some((x) => x.mount_accessor === accessor && x.name === name && x.id !== alias.id))
        throw invalid('alias with combination of mount accessor and name already exists');
    }
    const now = this.now();
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
      if (owner.aliases.some((x) => x.id !== alias.id && x.mount_accessor === accessor))
        throw invalid("Alias cannot be updated as the entity already has an alias for the given 'mount_accessor'");
      const next: EntityRecord = {
        ...owner,
        aliases: owner.aliases.map((x) => (x.id === alias.id ? moved : { ...x })),
        last_update_time: now,
      };
      await this.writeEntity(next, owner);
      return { id: alias.id, canonical_id: owner.id };
    }
    const dest = await this.entityExact(target);
    if (!dest) throw invalid('canonical_id', 'invalid new entity ID');
    if (dest.aliases.some((x) => x.mount_accessor === accessor))
      throw invalid('Alias cannot be updated as the given entity already has an alias for this mount');
    moved.canonical_id = dest.id;
    await this.writeEntity(
      { ...owner, aliases: owner.aliases.filter((x) => x.id !== alias.id), last_update_time: now },
      owner,
    );
    await this.writeEntity({ ...dest, aliases: [...dest.aliases, moved], last_update_time: now }, dest);
    return { id: alias.id, canonical_id: dest.id };
  }

  /** Delete an entity alias (no error when it does not exist). */
  async deleteEntityAlias(aliasId: string): Promise<void> {
    await this.lock.run('w', async () => {
      const owner = await this.byAliasId(aliasId);
      if (!owner) return;
      await this.writeEntity(
        { ...owner, aliases: owner.aliases.filter((a) => a.id !== aliasId), last_update_time: this.now() },
        owner,
      );
    });
  }

  // ---- writes: groups -------------------------------------------------------------------------

  /**
   * Create or update a group (vault handleGroupUpdateCommon). `existing` null creates. Member groups
   * are stored as parents on the member (Vault's ParentGroupIDs); a change that would make a loop is
   * refused. Answers the group and whether it was created.
   */
  async upsertGroup(existingId: string | null, input: GroupInput): Promise<{ group: GroupRecord; created: boolean }> {
    return this.lock.run('w', async () => {
      await this.loadGroups();
      const prev = existingId
        ? this.groups.get(existingId)
        : input.name
          ? this.groups.byGroupName(input.name)
          : undefined;
      if (existingId && !prev) throw invalid('id', 'invalid group ID');
      const now = this.now();
      const g: GroupRecord = prev
        ? { ...prev, member_entity_ids: [...prev.member_entity_ids], parent_group_ids: [...prev.parent_group_ids] }
        : {
            id: randomUUID(),
            name: '',
            type: 'internal',
            policies: [],
            metadata: {},
            member_entity_ids: [],
            parent_group_ids: [],
            alias: null,
            creation_time: now,
            last_update_time: now,
            modify_index: 0,
          };
      if (input.policies) g.policies = normalizeIdentityPolicies(input.policies);
      if (g.policies.includes('root')) throw invalid('policies', 'policies cannot contain root');
      if (input.type !== undefined && input.type !== '') {
        if (prev && input.type !== prev.type) throw invalid('type', 'group type cannot be changed');
        if (input.type !== 'internal' && input.type !== 'external')
          throw invalid('type', `invalid group type "${input.type}"`);
        g.type = input.type;
      }
      if (input.name) {
        if (!NAME_RE.test(input.name)) throw invalid('name', 'must be 1-255 printable characters without "/"');
        const named = this.groups.byGroupName(input.name);
        if (named && named.id !== g.id) throw invalid('name', 'group name is already in use');
        g.name = input.name;
      }
      if (!g.name) g.name = `group_${g.id}`;
      if (input.metadata) g.metadata = { ...input.metadata };
      if (input.member_entity_ids) {
        if (g.type === 'external')
          throw invalid('member_entity_ids', "member entities can't be set manually for external groups");
        const ids = [...new Set(input.member_entity_ids.filter((x) => x !== ''))];
        for (const id of ids)
          if (!(await this.entityExact(id))) throw invalid('member_entity_ids', `invalid member entity ID "${id}"`);
        g.member_entity_ids = ids;
      }
      let children: GroupRecord[] | null = null;
      if (input.member_group_ids) {
        if (g.type === 'external') throw invalid('member_group_ids', "member groups can't be set for external groups");
        const ids = [...new Set(input.member_group_ids.filter((x) => x !== ''))];
        children = [];
        for (const id of ids) {
          const c = this.groups.get(id);
          if (!c) throw invalid('member_group_ids', `invalid member group ID "${id}"`);
          children.push(c);
        }
        const loop = prev ? this.groups.wouldCycle(g.id, ids) : ids.includes(g.id) ? g.id : undefined;
        if (loop) throw invalid('member_group_ids', `cyclic relationship detected for member group ID "${loop}"`);
      }
      g.last_update_time = now;
      if (prev) g.modify_index = prev.modify_index + 1;
      else g.modify_index = 1;
      await this.writeGroup(g);
      if (children) {
        const wanted = new Set(children.map((c) => c.id));
        for (const c of this.groups.childrenOf(g.id)) {
          if (!wanted.has(c.id))
            await this.writeGroup({
              ...c,
              parent_group_ids: c.parent_group_ids.filter((p) => p !== g.id),
              modify_index: c.modify_index + 1,
              last_update_time: now,
            });
        }
        for (const c of children) {
          const cur = this.groups.get(c.id)!;
          if (!cur.parent_group_ids.includes(g.id))
            await this.writeGroup({
              ...cur,
              parent_group_ids: [...cur.parent_group_ids, g.id],
              modify_index: cur.modify_index + 1,
              last_update_time: now,
            });
        }
      }
      this.changed();
      return { group: this.groups.get(g.id)!, created: !prev };
    });
  }

  /** Delete a group (no error when it does not exist); its member groups lose it as a parent. */
  async deleteGroup(id: string): Promise<void> {
    await this.lock.run('w', async () => {
      await this.loadGroups();
      const g = this.groups.get(id);
      if (!g) return;
      for (const c of this.groups.childrenOf(g.id)) {
        await this.writeGroup({
          ...c,
          parent_group_ids: c.parent_group_ids.filter((p) => p !== g.id),
          modify_index: c.modify_index + 1,
          last_update_time: this.now(),
        });
      }
      await this.storage.delete(keys.group(g.id));
      this.groups.remove(g.id);
      this.changed();
    });
  }

  /**
   * Create or update a group alias (vault handleGroupAliasUpdateCommon): a new alias without
   * `canonical_id` gets a new external group. Answers null when nothing changed.
   */
  async upsertGroupAlias(input: GroupAliasInput): Promise<{ id: string; canonical_id: string } | null> {
    return this.lock.run('w', async () => {
      await this.loadGroups();
      let holder: GroupRecord | undefined;
      if (input.id) {
        holder = this.groups.byGroupAliasId(input.id);
        if (!holder) throw invalid('id', 'invalid group alias ID');
      }
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
      let target: GroupRecord | undefined;
      if (input.canonical_id) {
        target = this.groups.get(input.canonical_id);
        if (!target) throw invalid('canonical_id', "invalid group ID given in 'canonical_id'");
        if (target.type !== 'external') throw invalid('canonical_id', "alias can't be set on an internal group");
        if (target.alias && target.alias.id !== old?.id) throw invalid('canonical_id', 'group already has an alias');
      }
      const mount = this.requireMount(input.mount_accessor);
      const taken = this.groups.byAliasFactors(mount.accessor, input.name);
      if (taken && taken.alias!.id !== old?.id)
        throw invalid('combination of mount and group alias name is already in use');
      const now = this.now();
      let group: GroupRecord;
      if (target) group = { ...target };
      else if (holder) group = { ...holder };
      else
        group = {
          id: randomUUID(),
          name: '',
          type: 'external',
          policies: [],
          metadata: {},
          member_entity_ids: [],
          parent_group_ids: [],
          alias: null,
          creation_time: now,
          last_update_time: now,
          modify_index: 0,
        };
      if (!group.name) group.name = `group_${group.id}`;
      const alias: AliasRecord = {
        id: old?.id ?? randomUUID(),
        canonical_id: group.id,
        mount_accessor: mount.accessor,
        mount_path: mount.path,
        mount_type: mount.type,
        name: input.name,
        metadata: {},
        merged_from_canonical_ids: old?.merged_from_canonical_ids,
        creation_time: old?.creation_time ?? now,
        last_update_time: now,
      };
      if (holder && holder.id !== group.id)
        await this.writeGroup({ ...holder, alias: null, modify_index: holder.modify_index + 1, last_update_time: now });
      await this.writeGroup({ ...group, alias, modify_index: group.modify_index + 1, last_update_time: now });
      this.changed();
      return { id: alias.id, canonical_id: group.id };
    });
  }

  /** Delete a group alias (no error when it does not exist). */
  async deleteGroupAlias(aliasId: string): Promise<void> {
    await this.lock.run('w', async () => {
      await this.loadGroups();
      const g = this.groups.byGroupAliasId(aliasId);
      if (!g) return;
      await this.writeGroup({ ...g, alias: null, modify_index: g.modify_index + 1, last_update_time: this.now() });
      this.changed();
    });
  }

  /** Group alias ids, sorted. */
  async listGroupAliasIds(): Promise<string[]> {
    await this.loadGroups();
    const out: string[] = [];
    for (const g of this.groups.all()) if (g.alias) out.push(g.alias.id);
    return out.sort();
  }

  // ---- logins ---------------------------------------------------------------------------------

  /** External groups on `accessor` the entity should be in, given the group names its login reported. */
  private externalTargets(accessor: string, groupNames: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const n of groupNames) {
      const g = this.groups.byAliasFactors(accessor, n);
      if (g && g.type === 'external') out.add(g.id);
    }
    return out;
  }

  /** External groups on `accessor` the entity is in now. */
  private externalCurrent(entityId: string, accessor: string): Set<string> {
    const out = new Set<string>();
    for (const g of this.groups.groupsWithMember(entityId))
      if (g.type === 'external' && g.alias?.mount_accessor === accessor) out.add(g.id);
    return out;
  }

  /**
   * The entity of `alias` on `mount`, created on first sight; alias metadata refreshed, and the
   * entity's memberships of external groups on this mount set from the group names the method
   * reported (vault refreshExternalGroupMembershipsByEntityID).
   */
  async entityForLogin(
    mount: AliasMount,
    alias: { name: string; metadata?: Record<string, string> },
    groups: string[] = [],
  ): Promise<EntityRecord> {
    const key = keys.alias(mount.accessor, alias.name);
    // A repeat login with nothing to change needs neither the lock nor storage.
    const known = this.aliases.get(key);
    const cached = known === undefined ? undefined : this.cache.get(known);
    if (cached && this.groupsReady) {
      const a = cached.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === alias.name);
      if (
        a &&
        sameMap(a.metadata, alias.metadata ?? {}) &&
        sameSet(this.externalTargets(mount.accessor, groups), this.externalCurrent(cached.id, mount.accessor))
      )
        return cached;
    }
    await this.loadGroups();
    return this.lock.run('w', () => this.entityForAlias(key, mount, alias, groups));
  }

  private async entityForAlias(
    key: string,
    mount: AliasMount,
    alias: { name: string; metadata?: Record<string, string> },
    groups: string[],
  ): Promise<EntityRecord> {
    const known = this.aliases.get(key);
    const ref = known ? { entity_id: known } : await getJSON<{ entity_id: string }>(this.storage, key);
    const now = this.now();
    let prev = ref ? await this.entity(ref.entity_id) : null;
    // An index left behind by a deleted alias is not an alias.
    if (prev && !prev.aliases.some((x) => x.mount_accessor === mount.accessor && x.name === alias.name)) prev = null;
    let entity: EntityRecord;
    if (prev) entity = { ...prev, aliases: prev.aliases.map((x) => ({ ...x })) };
    else {
      const id = randomUUID();
      entity = {
        id,
        name: await this.freshName(id),
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
      await this.writeEntity(entity, prev);
    }
    await this.refreshExternalGroups(entity.id, mount.accessor, groups);
    if (this.aliases.size > 100_000) this.aliases.clear();
    this.aliases.set(key, entity.id);
    return this.cache.get(entity.id) ?? entity;
  }

  private async refreshExternalGroups(
    entityId: string,
    accessor: string,
    groupNames: readonly string[],
  ): Promise<void> {
    const want = this.externalTargets(accessor, groupNames);
    const have = this.externalCurrent(entityId, accessor);
    if (sameSet(want, have)) return;
    const now = this.now();
    for (const id of have) {
      if (want.has(id)) continue;
      const g = this.groups.get(id)!;
      await this.writeGroup({
        ...g,
        member_entity_ids: g.member_entity_ids.filter((x) => x !== entityId),
        modify_index: g.modify_index + 1,
        last_update_time: now,
      });
    }
    for (const id of want) {
      if (have.has(id)) continue;
      const g = this.groups.get(id)!;
      await this.writeGroup({
        ...g,
        member_entity_ids: [...g.member_entity_ids, entityId],
        modify_index: g.modify_index + 1,
        last_update_time: now,
      });
    }
    this.changed();
  }
}
