/**
 * Identity store: one entity per (auth mount, alias name), created at the first login and found again
 * at the next (Vault vault/identity_store_util.go CreateOrFetchEntity). Alias metadata is refreshed
 * from each login, as Vault does when the method reports changed metadata. Records live behind the
 * barrier; the alias index key is a SHA-256 of mount accessor and name so no storage key names a user.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock, TokenIdentity } from '../framework/context.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { KeyedLock } from '../framework/keyed-lock.js';

/** A stored alias (Vault's identity alias fields, snake_case on the wire). */
export interface AliasRecord {
  id: string;
  canonical_id: string;
  mount_accessor: string;
  mount_path: string;
  mount_type: string;
  name: string;
  metadata: Record<string, string>;
  creation_time: string;
  last_update_time: string;
}

/** A stored entity. */
export interface EntityRecord {
  id: string;
  name: string;
  metadata: Record<string, string>;
  policies: string[];
  aliases: AliasRecord[];
  group_names: string[];
  creation_time: string;
  last_update_time: string;
  disabled: boolean;
}

/** The mount an alias belongs to. */
export interface AliasMount {
  accessor: string;
  path: string;
  type: string;
}

function aliasKey(mountAccessor: string, name: string): string {
  return createHash('sha256').update(`${mountAccessor}\0${name}`).digest('hex');
}

/** Same key/value pairs (alias metadata; order does not matter). */
function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (a[k] !== b[k]) return false;
  return true;
}

/** Same set of group names as the entity holds (sorted, de-duplicated). */
function sameStrings(held: string[], given: string[]): boolean {
  if (given.length === 0) return held.length === 0;
  const g = [...new Set(given)].sort();
  return g.length === held.length && g.every((x, i) => x === held[i]);
}

/** Entities and aliases. */
export class IdentityStore {
  private readonly cache = new Map<string, EntityRecord>();
  /** Alias index key -> entity id, as read or written (a repeat login reads no storage). */
  private readonly aliases = new Map<string, string>();
  /** One login per alias at a time: two concurrent first logins must not make two entities. */
  private readonly locks = new KeyedLock();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** The entity of `alias` on `mount`, created on first sight; alias metadata and groups refreshed. */
  async entityForLogin(mount: AliasMount, alias: { name: string; metadata?: Record<string, string> }, groups: string[] = []): Promise<EntityRecord> {
    const key = aliasKey(mount.accessor, alias.name);
    // A repeat login with nothing to change needs neither the lock nor storage.
    const known = this.aliases.get(key);
    const cached = known === undefined ? undefined : this.cache.get(known);
    if (cached && sameStrings(cached.group_names, groups)) {
      const a = cached.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === alias.name);
      if (a && sameMap(a.metadata, alias.metadata ?? {})) return cached;
    }
    return this.locks.run(key, () => this.entityForAlias(key, mount, alias, groups));
  }

  private async entityForAlias(key: string, mount: AliasMount, alias: { name: string; metadata?: Record<string, string> }, groups: string[]): Promise<EntityRecord> {
    const known = this.aliases.get(key);
    const ref = known ? { entity_id: known } : await getJSON<{ entity_id: string }>(this.storage, `alias/${key}`);
    const now = new Date(this.clock.now()).toISOString();
    let entity = ref ? await this.entity(ref.entity_id) : null;
    if (!entity) {
      const id = randomUUID();
      entity = { id, name: `entity_${randomBytes(4).toString('hex')}`, metadata: {}, policies: [], aliases: [], group_names: [], creation_time: now, last_update_time: now, disabled: false };
    }
    let a = entity.aliases.find((x) => x.mount_accessor === mount.accessor && x.name === alias.name);
    let changed = !ref;
    if (!a) {
      a = { id: randomUUID(), canonical_id: entity.id, mount_accessor: mount.accessor, mount_path: mount.path, mount_type: mount.type, name: alias.name, metadata: alias.metadata ?? {}, creation_time: now, last_update_time: now };
      entity.aliases.push(a);
      changed = true;
    } else if (JSON.stringify(a.metadata) !== JSON.stringify(alias.metadata ?? {})) {
      a.metadata = alias.metadata ?? {};
      a.last_update_time = now;
      changed = true;
    }
    const g = [...new Set(groups)].sort();
    if (JSON.stringify(g) !== JSON.stringify(entity.group_names)) {
      entity.group_names = g;
      changed = true;
    }
    if (changed) {
      entity.last_update_time = now;
      await Promise.all([
        putJSON(this.storage, `entity/${entity.id}`, entity),
        putJSON(this.storage, `alias/${key}`, { entity_id: entity.id }),
        putJSON(this.storage, `alias-id/${a.id}`, { entity_id: entity.id }),
        putJSON(this.storage, `name/${entity.name}`, { entity_id: entity.id }),
      ]);
    }
    this.cache.set(entity.id, entity);
    if (this.aliases.size > 100_000) this.aliases.clear();
    this.aliases.set(key, entity.id);
    return entity;
  }

  /** An entity by id, or null. */
  async entity(id: string): Promise<EntityRecord | null> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return null;
    const hit = this.cache.get(id);
    if (hit) return hit;
    const e = await getJSON<EntityRecord>(this.storage, `entity/${id}`);
    if (e) this.cache.set(id, e);
    return e;
  }

  /** An entity by name, or null. */
  async byName(name: string): Promise<EntityRecord | null> {
    if (!/^[\w.-]{1,128}$/.test(name)) return null;
    const ref = await getJSON<{ entity_id: string }>(this.storage, `name/${name}`);
    return ref ? this.entity(ref.entity_id) : null;
  }

  /** The entity owning alias id `aliasId`, or null. */
  async byAliasId(aliasId: string): Promise<EntityRecord | null> {
    if (!/^[0-9a-f-]{36}$/.test(aliasId)) return null;
    const ref = await getJSON<{ entity_id: string }>(this.storage, `alias-id/${aliasId}`);
    return ref ? this.entity(ref.entity_id) : null;
  }

  /** The entity of alias `name` on the mount with `mountAccessor`, or null. */
  async byAlias(mountAccessor: string, name: string): Promise<EntityRecord | null> {
    const ref = await getJSON<{ entity_id: string }>(this.storage, `alias/${aliasKey(mountAccessor, name)}`);
    return ref ? this.entity(ref.entity_id) : null;
  }

  /** Ids of all entities. */
  async listIds(): Promise<string[]> {
    return (await this.storage.list('entity/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** The templating view of a token's entity (policy templates), or null. */
  async tokenIdentity(entityId: string): Promise<TokenIdentity | null> {
    const e = await this.entity(entityId);
    return e ? identityView(e) : null;
  }

  /** The templating view from memory only: undefined when the entity is not cached (the caller then awaits tokenIdentity). */
  cachedTokenIdentity(entityId: string): TokenIdentity | undefined {
    const e = this.cache.get(entityId);
    return e ? identityView(e) : undefined;
  }

  /** Forget cached entities (seal, or another daemon changed storage). */
  clear(): void {
    this.cache.clear();
    this.aliases.clear();
  }
}

/** An entity as the ACL's templating reads it (framework TokenIdentity). */
function identityView(e: EntityRecord): TokenIdentity {
  return {
    entityId: e.id,
    entityName: e.name,
    entityMetadata: e.metadata,
    aliases: e.aliases.map((a) => ({ id: a.id, mountAccessor: a.mount_accessor, name: a.name, metadata: a.metadata })),
  };
}
