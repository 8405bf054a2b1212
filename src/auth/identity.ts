/**
 * Identity store: entities and their aliases, groups and group aliases (Vault vault/identity_store*.go).
 * Logins find or create the entity of (auth mount, alias name) and refresh the alias metadata and the
 * external groups the method reports (identity/login-entity.ts); the identity API edits the same
 * records (identity/entity-edits.ts, identity/group-edits.ts), one writer at a time.
 *
 * A token's identity (templating fields, and the identity policies of the entity and of its groups,
 * direct and inherited) is computed once per entity and kept until an entity or group changes, so the
 * request hot path reads a map and callers may key caches on the object.
 *
 * Records live behind the barrier (identity/records.ts names the keys). Entities are read on demand and
 * cached (identity/entity-store.ts); groups are few and held in memory whole (identity/group-store.ts).
 */
import type { Clock, TokenIdentity } from '../framework/context.js';
import { KeyedLock } from '../framework/keyed-lock.js';
import type { Storage } from '../storage/backend.js';
import {
  type AliasIds,
  deleteEntity,
  deleteEntityAlias,
  type EntityAliasInput,
  type EntityInput,
  mergeEntities,
  upsertEntity,
  upsertEntityAlias,
} from './identity/entity-edits.js';
import { EntityStore } from './identity/entity-store.js';
import {
  deleteGroup,
  deleteGroupAlias,
  type GroupAliasInput,
  type GroupInput,
  upsertGroup,
  upsertGroupAlias,
} from './identity/group-edits.js';
import { GroupStore } from './identity/group-store.js';
import { type LoginAlias, loginEntity, unchangedLoginEntity } from './identity/login-entity.js';
import type { IdentityParts } from './identity/parts.js';
import {
  type AliasMount,
  type EntityRecord,
  type GroupRecord,
  type MountResolver,
  timestamp,
} from './identity/records.js';
import { tokenView } from './identity/token-view.js';

export type { AliasIds, EntityAliasInput, EntityInput } from './identity/entity-edits.js';
export type { GroupAliasInput, GroupInput } from './identity/group-edits.js';
export type {
  AliasMount,
  AliasRecord,
  EntityRecord,
  GroupRecord,
  GroupType,
  MountResolver,
} from './identity/records.js';

/** Entities, aliases and groups. */
export class IdentityStore {
  /** Entity records (reads for the identity API go here). */
  readonly entities: EntityStore;
  /** Group records (reads for the identity API go here). */
  readonly groups: GroupStore;
  private readonly parts: IdentityParts;
  /** Token views by entity id (the id a token carries), dropped on every change. */
  private readonly views = new Map<string, TokenIdentity>();
  /** Bumped by every change: a view computed across one is not kept. */
  private generation = 0;
  /** One writer at a time (logins that change something, and the identity API). */
  private readonly lock = new KeyedLock();

  constructor(
    private readonly storage: Storage,
    clock: Clock,
    private readonly mounts: MountResolver = () => undefined,
  ) {
    const changed = () => this.changed();
    this.entities = new EntityStore(this.storage, changed);
    this.groups = new GroupStore(this.storage, changed);
    this.parts = { entities: this.entities, groups: this.groups, mounts, now: () => timestamp(clock.now()) };
  }

  /** Something changed: token views (identity policies, templating) are recomputed on next use. */
  private changed(): void {
    this.generation++;
    this.views.clear();
  }

  /** Forget everything cached (seal, or another daemon changed storage). */
  clear(): void {
    this.changed();
    this.entities.clear();
    this.groups.clear();
  }

  private write<T>(edit: (p: IdentityParts) => Promise<T>): Promise<T> {
    return this.lock.run('w', () => edit(this.parts));
  }

  // ---- reads ------------------------------------------------------------------------------------

  /** An entity by id (a merged entity's id gives the entity it became), or null. */
  entity(id: string): Promise<EntityRecord | null> {
    return this.entities.get(id);
  }

  /** An entity by name, or null. */
  byName(name: string): Promise<EntityRecord | null> {
    return this.entities.byName(name);
  }

  /** The entity owning alias id `aliasId`, or null. */
  byAliasId(aliasId: string): Promise<EntityRecord | null> {
    return this.entities.byAliasId(aliasId);
  }

  /** The entity of alias `name` on the mount with `mountAccessor`, or null. */
  byAlias(mountAccessor: string, name: string): Promise<EntityRecord | null> {
    return this.entities.byAlias(mountAccessor, name);
  }

  /** Ids of all entities, sorted. */
  listIds(): Promise<string[]> {
    return this.entities.ids();
  }

  /** The live mount of an accessor (undefined when none has it). */
  mountOf(accessor: string): AliasMount | undefined {
    return this.mounts(accessor);
  }

  /** Direct and inherited group ids of an entity (Vault's direct_group_ids, inherited_group_ids). */
  async groupsOf(entityId: string): Promise<{ direct: string[]; inherited: string[] }> {
    const graph = await this.groups.load();
    const e = await this.entities.get(entityId);
    const g = graph.groupsOfEntity(e?.id ?? entityId);
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
    const graph = await this.groups.load();
    const e = await this.entities.get(entityId);
    if (!e) return null;
    const view = tokenView(e, graph.groupsOfEntity(e.id));
    if (gen === this.generation) this.views.set(entityId, view);
    return view;
  }

  /**
   * The identity from memory only: undefined when the entity or the groups are not loaded (the caller
   * then awaits tokenIdentity). The same object is answered until something changes.
   */
  cachedTokenIdentity(entityId: string): TokenIdentity | undefined {
    const hit = this.views.get(entityId);
    if (hit || !this.groups.ready) return hit;
    const e = this.entities.cached(entityId);
    if (!e) return undefined;
    const view = tokenView(e, this.groups.now.groupsOfEntity(e.id));
    this.views.set(entityId, view);
    return view;
  }

  // ---- logins -------------------------------------------------------------------------------

  /**
   * The entity of `alias` on `mount`, created on first sight; alias metadata refreshed, and the entity's
   * memberships of external groups on this mount set from the group names the method reported.
   */
  async entityForLogin(mount: AliasMount, alias: LoginAlias, groups: string[] = []): Promise<EntityRecord> {
    // A repeat login with nothing to change needs neither the lock nor storage.
    const same = unchangedLoginEntity(this.parts, mount, alias, groups);
    if (same) return same;
    return this.write((p) => loginEntity(p, mount, alias, groups));
  }

  // ---- edits (the identity API) ---------------------------------------------------------------

  /** Create or update an entity (by id, else by name); see identity/entity-edits.ts. */
  upsertEntity(input: EntityInput): Promise<{ entity: EntityRecord; created: boolean }> {
    return this.write((p) => upsertEntity(p, input));
  }

  /** Delete an entity with its aliases and memberships (nothing when it does not exist). */
  deleteEntity(id: string): Promise<void> {
    return this.write((p) => deleteEntity(p, id));
  }

  /** Delete an entity by name. */
  deleteEntityByName(name: string): Promise<void> {
    return this.write(async (p) => {
      const e = await p.entities.byName(name);
      if (e) await deleteEntity(p, e.id);
    });
  }

  /** Delete many entities (identity/entity/batch-delete). */
  batchDelete(ids: readonly string[]): Promise<void> {
    return this.write(async (p) => {
      for (const id of ids) await deleteEntity(p, id);
    });
  }

  /** Merge entities into one (identity/entity/merge). */
  merge(fromIds: readonly string[], toId: string, keepAliasIds: readonly string[]): Promise<void> {
    return this.write((p) => mergeEntities(p, fromIds, toId, keepAliasIds));
  }

  /** Create or update an entity alias; null when nothing changed. */
  upsertEntityAlias(input: EntityAliasInput): Promise<AliasIds | null> {
    return this.write((p) => upsertEntityAlias(p, input));
  }

  /** Delete an entity alias (nothing when it does not exist). */
  deleteEntityAlias(aliasId: string): Promise<void> {
    return this.write((p) => deleteEntityAlias(p, aliasId));
  }

  /** Create or update a group (`existingId` null: by name, or new); see identity/group-edits.ts. */
  upsertGroup(existingId: string | null, input: GroupInput): Promise<{ group: GroupRecord; created: boolean }> {
    return this.write((p) => upsertGroup(p, existingId, input));
  }

  /** Delete a group (nothing when it does not exist). */
  deleteGroup(id: string): Promise<void> {
    return this.write((p) => deleteGroup(p, id));
  }

  /** Create or update a group alias; null when nothing changed. */
  upsertGroupAlias(input: GroupAliasInput): Promise<AliasIds | null> {
    return this.write((p) => upsertGroupAlias(p, input));
  }

  /** Delete a group alias (nothing when it does not exist). */
  deleteGroupAlias(aliasId: string): Promise<void> {
    return this.write((p) => deleteGroupAlias(p, aliasId));
  }
}
