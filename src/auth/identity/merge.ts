/**
 * Entity merge as Vault does it (vault/identity_store_entities.go mergeEntity): the aliases of the
 * "from" entities move to the "to" entity, remembering where they came from; two aliases on one mount
 * are a conflict the caller settles with `conflicting_alias_ids_to_keep`; the merged ids are kept so
 * tokens issued to a merged entity resolve to the one it became. Pure: the store writes the result.
 */
import { invalid } from '../../framework/errors.js';
import type { AliasRecord, EntityRecord } from './records.js';

/** What a merge changes: the new "to" entity, and the aliases that disappear (their indexes go). */
export interface MergePlan {
  to: EntityRecord;
  droppedAliases: AliasRecord[];
}

/** Merge `from` into `to` (copies; inputs untouched). Throws a 400 naming the conflicts. */
export function planMerge(
  to: EntityRecord,
  from: readonly EntityRecord[],
  keep: readonly string[],
  now: string,
): MergePlan {
  if (keep.length > 0 && from.length > 1)
    throw invalid('conflicting_alias_ids_to_keep', 'can only be used with a single entity in from_entity_ids');
  const next: EntityRecord = {
    ...to,
    aliases: to.aliases.map((a) => ({ ...a })),
    merged_entity_ids: [...(to.merged_entity_ids ?? [])],
  };
  const dropped: AliasRecord[] = [];
  const conflicts: string[] = [];
  for (const f of from) {
    for (const a of f.aliases) {
      const clash = next.aliases.find((x) => x.mount_accessor === a.mount_accessor);
      if (clash) {
        if (keep.includes(a.id)) {
          next.aliases = next.aliases.filter((x) => x !== clash);
          dropped.push(clash);
        } else if (keep.includes(clash.id)) {
          dropped.push(a);
          continue;
        } else {
          conflicts.push(`${a.id}, ${clash.id}`);
          continue;
        }
      }
      next.aliases.push({
        ...a,
        canonical_id: to.id,
        merged_from_canonical_ids: [...(a.merged_from_canonical_ids ?? []), f.id],
        last_update_time: now,
      });
    }
    for (const id of [f.id, ...(f.merged_entity_ids ?? [])])
      if (!next.merged_entity_ids!.includes(id)) next.merged_entity_ids!.push(id);
  }
  if (conflicts.length) {
    throw invalid(
      `conflicting mount accessors in following alias IDs and neither were present in conflicting_alias_ids_to_keep: ${conflicts.join('; ')}`,
    );
  }
  next.last_update_time = now;
  return { to: next, droppedAliases: dropped };
}
