/**
 * Stored shapes of the identity store (Vault's identity.Entity, identity.Alias and identity.Group,
 * helper/identity/types.proto), snake_case as on the wire, and the storage keys they live under.
 * Records sit behind the barrier; the alias index key is a SHA-256 of mount accessor and name so no
 * storage key names a user.
 */
import { createHash } from 'node:crypto';

/** A stored entity alias (or the alias of an external group). */
export interface AliasRecord {
  id: string;
  /** The entity (or group) the alias belongs to. */
  canonical_id: string;
  mount_accessor: string;
  /** Mount path and type when the alias was made (read answers prefer the live mount). */
  mount_path: string;
  mount_type: string;
  name: string;
  /** Set by the auth method at login. */
  metadata: Record<string, string>;
  /** Set through the API only. */
  custom_metadata?: Record<string, string>;
  /** Entities this alias came from through merges. */
  merged_from_canonical_ids?: string[];
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
  /** Entities merged into this one (their tokens resolve here). */
  merged_entity_ids?: string[];
  creation_time: string;
  last_update_time: string;
  disabled: boolean;
  /** Written by earlier versions (group names of the last login); no longer read. */
  group_names?: string[];
}

/** Vault's two kinds of group: members set by hand, or by logins through the group's alias. */
export type GroupType = 'internal' | 'external';

/** A stored group. */
export interface GroupRecord {
  id: string;
  name: string;
  type: GroupType;
  policies: string[];
  metadata: Record<string, string>;
  member_entity_ids: string[];
  /** Groups this group is a member of (Vault stores the edge on the child). */
  parent_group_ids: string[];
  /** External groups only: the name the auth method reports for the group. */
  alias: AliasRecord | null;
  creation_time: string;
  last_update_time: string;
  modify_index: number;
}

/** The mount an alias belongs to. */
export interface AliasMount {
  accessor: string;
  path: string;
  type: string;
}

/** Resolves a mount accessor to its mount (undefined when no mount has it). */
export type MountResolver = (accessor: string) => AliasMount | undefined;

/** Storage keys under the identity store's prefix. */
export const keys = {
  entity: (id: string) => `entity/${id}`,
  entityName: (name: string) => `name/${encodeURIComponent(name)}`,
  alias: (mountAccessor: string, name: string) =>
    `alias/${createHash('sha256').update(`${mountAccessor}\0${name}`).digest('hex')}`,
  aliasId: (id: string) => `alias-id/${id}`,
  merged: (id: string) => `merged/${id}`,
  group: (id: string) => `group/${id}`,
};

/** Ids are UUIDs: anything else is not looked up (and never becomes a storage key). */
export const ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Names of entities and groups: printable, no slash (they name storage keys, encoded). */
export const NAME_RE = /^[^/\s\p{Cc}][^/\p{Cc}]{0,254}$/u;

/** RFC 3339 with nanosecond-free fraction, as Go's ptypes.TimestampString prints it. */
export function timestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** Lower-cased, trimmed, de-duplicated policy names in first-seen order (Vault RemoveDuplicatesStable(..., true)). */
export function normalizeIdentityPolicies(list: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of list) {
    const n = p.trim().toLowerCase();
    if (n !== '' && !out.includes(n)) out.push(n);
  }
  return out;
}
