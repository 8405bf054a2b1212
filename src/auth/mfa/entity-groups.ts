/**
 * The identity groups of an entity, for login MFA enforcement by `identity_group_ids`. The identity
 * store's `groupIdsOf(entityId)` (direct and inherited groups) answers when the store has it; a store
 * without groups answers none. This is the one place login MFA asks about groups.
 */

/** What login MFA needs of the identity store. */
export interface EntityDirectory {
  entity(id: string): Promise<{ id: string; name: string } | null>;
  groupIdsOf?(entityId: string): Promise<string[]> | string[];
}

/** The ids of the groups `entityId` belongs to (directly or through nested groups). */
export async function entityGroupIds(dir: EntityDirectory, entityId: string): Promise<string[]> {
  if (typeof dir.groupIdsOf !== 'function') return [];
  return [...(await dir.groupIdsOf(entityId))];
}
