/**
 * What the identity store's edits work on: the entity and group stores, the live mounts, and the
 * clock. The store (auth/identity.ts) builds it once and runs each edit under its write lock.
 */
import { invalid } from '../../framework/errors.js';
import type { EntityStore } from './entity-store.js';
import type { GroupStore } from './group-store.js';
import type { AliasMount, MountResolver } from './records.js';

/** The parts an identity edit needs. */
export interface IdentityParts {
  entities: EntityStore;
  groups: GroupStore;
  mounts: MountResolver;
  /** The current time as records store it (RFC 3339). */
  now(): string;
}

/** The live mount of `accessor`, or a 400 naming mount_accessor. */
export function requireMount(parts: IdentityParts, accessor: string | undefined): AliasMount {
  if (!accessor) throw invalid('mount_accessor', 'missing mount_accessor');
  const m = parts.mounts(accessor);
  if (!m) throw invalid('mount_accessor', `invalid mount accessor "${accessor}"`);
  return m;
}
