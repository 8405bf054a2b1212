/**
 * The groups of the identity store held in memory, with the indexes Vault's MemDB keeps for them
 * (vault/identity_store_util.go): by name, by alias (mount accessor + name), by member entity and by
 * parent. No storage here: the identity store loads and writes the records and keeps this in step.
 * Groups are few next to entities, so every group is held; entities are not.
 */
import type { GroupRecord } from './records.js';

/** Groups of one entity: the ones it is a member of, and the ones those belong to (transitively). */
export interface EntityGroups {
  direct: GroupRecord[];
  inherited: GroupRecord[];
}

/** All groups, indexed. */
export class GroupGraph {
  private readonly byId = new Map<string, GroupRecord>();
  private readonly byName = new Map<string, string>();
  private readonly byAlias = new Map<string, string>();
  private readonly byAliasId = new Map<string, string>();
  private readonly byMember = new Map<string, Set<string>>();

  /** Every group, in no particular order. */
  all(): IterableIterator<GroupRecord> {
    return this.byId.values();
  }

  get size(): number {
    return this.byId.size;
  }

  get(id: string): GroupRecord | undefined {
    return this.byId.get(id);
  }

  byGroupName(name: string): GroupRecord | undefined {
    const id = this.byName.get(name.toLowerCase());
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** The external group whose alias is `name` on the mount with `mountAccessor`. */
  byAliasFactors(mountAccessor: string, name: string): GroupRecord | undefined {
    const id = this.byAlias.get(`${mountAccessor}\0${name}`);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** The group holding alias `aliasId`. */
  byGroupAliasId(aliasId: string): GroupRecord | undefined {
    const id = this.byAliasId.get(aliasId);
    return id === undefined ? undefined : this.byId.get(id);
  }

  /** Add or replace a group (its old index entries go). */
  put(g: GroupRecord): void {
    this.remove(g.id);
    this.byId.set(g.id, g);
    // Vault matches group names case-insensitively (MemDBGroupByName lower-cases).
    this.byName.set(g.name.toLowerCase(), g.id);
    if (g.alias) {
      this.byAlias.set(`${g.alias.mount_accessor}\0${g.alias.name}`, g.id);
      this.byAliasId.set(g.alias.id, g.id);
    }
    for (const e of g.member_entity_ids) {
      let s = this.byMember.get(e);
      if (!s) this.byMember.set(e, (s = new Set()));
      s.add(g.id);
    }
  }

  /** Drop a group from every index. */
  remove(id: string): void {
    const old = this.byId.get(id);
    if (!old) return;
    this.byId.delete(id);
    if (this.byName.get(old.name.toLowerCase()) === id) this.byName.delete(old.name.toLowerCase());
    if (old.alias) {
      this.byAlias.delete(`${old.alias.mount_accessor}\0${old.alias.name}`);
      this.byAliasId.delete(old.alias.id);
    }
    for (const e of old.member_entity_ids) {
      const s = this.byMember.get(e);
      s?.delete(id);
      if (s?.size === 0) this.byMember.delete(e);
    }
  }

  clear(): void {
    this.byId.clear();
    this.byName.clear();
    this.byAlias.clear();
    this.byAliasId.clear();
    this.byMember.clear();
  }

  /** Groups that list `groupId` among their parents (Vault's member groups of a group), sorted by id. */
  childrenOf(groupId: string): GroupRecord[] {
    const out: GroupRecord[] = [];
    for (const g of this.byId.values()) if (g.parent_group_ids.includes(groupId)) out.push(g);
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Groups with `entityId` as a member. */
  groupsWithMember(entityId: string): GroupRecord[] {
    const ids = this.byMember.get(entityId);
    if (!ids) return [];
    const out: GroupRecord[] = [];
    for (const id of ids) {
      const g = this.byId.get(id);
      if (g) out.push(g);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * The entity's groups: direct (it is a member) and inherited (parents of those, transitively;
   * Vault's groupsByEntityID). Policies of both apply to the entity's tokens.
   */
  groupsOfEntity(entityId: string): EntityGroups {
    const direct = this.groupsWithMember(entityId);
    const seen = new Set(direct.map((g) => g.id));
    const inherited: GroupRecord[] = [];
    const queue = [...direct];
    while (queue.length) {
      const g = queue.shift()!;
      for (const pid of g.parent_group_ids) {
        if (seen.has(pid)) continue;
        seen.add(pid);
        const p = this.byId.get(pid);
        if (!p) continue;
        inherited.push(p);
        queue.push(p);
      }
    }
    inherited.sort((a, b) => a.id.localeCompare(b.id));
    return { direct, inherited };
  }

  /**
   * Whether making `childIds` members of `parentId` would close a loop: true when `parentId` is
   * reachable upward from itself through one of them (Vault's validateMemberGroupID cycle check).
   */
  wouldCycle(parentId: string, childIds: readonly string[]): string | undefined {
    for (const child of childIds) {
      if (child === parentId) return child;
      // Walk up from the parent: if the child is among the parent's ancestors, the edge closes a loop.
      const seen = new Set<string>();
      const stack = [parentId];
      while (stack.length) {
        const id = stack.pop()!;
        if (id === child) return child;
        if (seen.has(id)) continue;
        seen.add(id);
        const g = this.byId.get(id);
        if (g) stack.push(...g.parent_group_ids);
      }
    }
    return undefined;
  }
}
