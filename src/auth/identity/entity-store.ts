/**
 * Entity records and their indexes in storage (records.ts names the keys): by id, by name, by alias
 * (mount accessor + name) and by alias id, plus the pointers that make a merged entity's id find the
 * entity it became. Entities are read on demand and cached; every write tells the owner (token views
 * start over).
 */
import { randomUUID } from 'node:crypto';
import { getJSON, putJSON, type Storage } from '../../storage/backend.js';
import { ID_RE, NAME_RE, keys, type AliasRecord, type EntityRecord } from './records.js';

/** Entity merges followed at most this deep (a merged entity's id points at the one it became). */
const MERGE_DEPTH = 16;

type Ref = { entity_id: string };

/** Entities in storage, cached. */
export class EntityStore {
  private readonly cache = new Map<string, EntityRecord>();
  /** Alias index key -> entity id, as read or written (a repeat login reads no storage). */
  private readonly aliasIndex = new Map<string, string>();
  /** Bumped by clear(): a read begun before does not fill the cache. */
  private generation = 0;

  constructor(
    private readonly storage: Storage,
    private readonly onChange: () => void,
  ) {}

  /** Forget every cached record. */
  clear(): void {
    this.generation++;
    this.cache.clear();
    this.aliasIndex.clear();
  }

  /** The cached entity of an id, without storage (the hot path). */
  cached(id: string): EntityRecord | undefined {
    return this.cache.get(id);
  }

  /** The cached entity of an alias, without storage (a repeat login). */
  cachedByAlias(mountAccessor: string, name: string): EntityRecord | undefined {
    const id = this.aliasIndex.get(keys.alias(mountAccessor, name));
    return id === undefined ? undefined : this.cache.get(id);
  }

  /** An entity by id (a merged entity's id gives the entity it became), or null. */
  async get(id: string): Promise<EntityRecord | null> {
    for (let i = 0; i < MERGE_DEPTH && ID_RE.test(id); i++) {
      const hit = this.cache.get(id);
      if (hit) return hit;
      const gen = this.generation;
      const e = await getJSON<EntityRecord>(this.storage, keys.entity(id));
      if (e) {
        if (gen === this.generation) this.cache.set(id, e);
        return e;
      }
      const merged = await getJSON<Ref>(this.storage, keys.merged(id));
      if (!merged) return null;
      id = merged.entity_id;
    }
    return null;
  }

  /** An entity by exactly its id (no merge redirection), or null. */
  async exact(id: string): Promise<EntityRecord | null> {
    const e = await this.get(id);
    return e && e.id === id ? e : null;
  }

  /** An entity by name, or null. */
  async byName(name: string): Promise<EntityRecord | null> {
    if (!NAME_RE.test(name)) return null;
    const ref = await getJSON<Ref>(this.storage, keys.entityName(name));
    return ref ? this.get(ref.entity_id) : null;
  }

  /** The entity owning alias id `aliasId`, or null. */
  async byAliasId(aliasId: string): Promise<EntityRecord | null> {
    if (!ID_RE.test(aliasId)) return null;
    const ref = await getJSON<Ref>(this.storage, keys.aliasId(aliasId));
    const e = ref ? await this.get(ref.entity_id) : null;
    return e?.aliases.some((a) => a.id === aliasId) ? e : null;
  }

  /** The entity holding alias `name` on the mount with `mountAccessor`, or null. */
  async byAlias(mountAccessor: string, name: string): Promise<EntityRecord | null> {
    const known = this.aliasIndex.get(keys.alias(mountAccessor, name));
    const ref = known ? { entity_id: known } : await getJSON<Ref>(this.storage, keys.alias(mountAccessor, name));
    const e = ref ? await this.get(ref.entity_id) : null;
    // An index left behind by a deleted or moved alias is not an alias.
    return e?.aliases.some((a) => a.mount_accessor === mountAccessor && a.name === name) ? e : null;
  }

  /** Ids of all entities, sorted. */
  async ids(): Promise<string[]> {
    return (await this.storage.list('entity/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** All entities, in id order. */
  async list(): Promise<EntityRecord[]> {
    const out: EntityRecord[] = [];
    for (const id of await this.ids()) {
      const e = await this.exact(id);
      if (e) out.push(e);
    }
    return out;
  }

  /** Ids of all entity aliases, sorted. */
  async aliasIds(): Promise<string[]> {
    return (await this.storage.list('alias-id/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** A fresh entity name that no entity has (Vault names unnamed entities entity_<8 hex>). */
  async freshName(id: string): Promise<string> {
    let name = `entity_${id.slice(0, 8)}`;
    while (await this.byName(name)) name = `entity_${randomUUID().slice(0, 8)}`;
    return name;
  }

  /** Persist `next` and its indexes, dropping the indexes `prev` had that `next` has not. */
  async write(next: EntityRecord, prev: EntityRecord | null): Promise<void> {
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
      if (prev.name !== next.name) await this.dropName(prev.name, prev.id);
      for (const a of prev.aliases) {
        const now = next.aliases.find((x) => x.id === a.id);
        if (!now) await this.dropAlias(a, prev.id);
        else if (now.mount_accessor !== a.mount_accessor || now.name !== a.name) await this.dropFactor(a, prev.id);
      }
    }
    this.cache.set(next.id, next);
    if (this.aliasIndex.size > 100_000) this.aliasIndex.clear();
    for (const a of next.aliases) this.aliasIndex.set(keys.alias(a.mount_accessor, a.name), next.id);
    this.onChange();
  }

  /** Delete an entity record with its name and alias indexes. */
  async remove(e: EntityRecord): Promise<void> {
    for (const a of e.aliases) await this.dropAlias(a, e.id);
    await this.dropName(e.name, e.id);
    await this.storage.delete(keys.entity(e.id));
    this.cache.delete(e.id);
    this.onChange();
  }

  /** Make `fromId` (merged away) find `toId` from now on. */
  async redirect(fromId: string, toId: string): Promise<void> {
    await putJSON(this.storage, keys.merged(fromId), { entity_id: toId });
  }

  /** Drop both indexes of an alias that no longer exists (when they still point at `entityId`). */
  async dropAlias(a: AliasRecord, entityId: string): Promise<void> {
    await this.dropFactor(a, entityId);
    await this.storage.delete(keys.aliasId(a.id));
  }

  private async dropName(name: string, entityId: string): Promise<void> {
    const ref = await getJSON<Ref>(this.storage, keys.entityName(name));
    if (ref?.entity_id === entityId) await this.storage.delete(keys.entityName(name));
  }

  private async dropFactor(a: AliasRecord, entityId: string): Promise<void> {
    const k = keys.alias(a.mount_accessor, a.name);
    if (this.aliasIndex.get(k) === entityId) this.aliasIndex.delete(k);
    const ref = await getJSON<Ref>(this.storage, k);
    if (ref?.entity_id === entityId) await this.storage.delete(k);
  }
}
