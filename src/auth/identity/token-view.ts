/**
 * What a token's request needs of its entity: the templating view (Vault sdk/helper/identitytpl) and
 * the identity policies, the entity's own plus those of its groups, direct and inherited
 * (vault/request_handling.go fetchEntityAndDerivedPolicies).
 */
import type { TokenIdentity } from '../../framework/context.js';
import type { EntityGroups } from './group-graph.js';
import type { EntityRecord } from './records.js';

/** The identity of a token: templating fields plus the policies and state that apply to it. */
export function tokenView(e: EntityRecord, groups: EntityGroups): TokenIdentity {
  const all = [...groups.direct, ...groups.inherited];
  const policies = new Set(e.policies);
  for (const g of all) for (const p of g.policies) policies.add(p);
  const groupMetadata: Record<string, Record<string, string>> = {};
  for (const g of all) groupMetadata[g.id] = g.metadata;
  const view: TokenIdentity = {
    entityId: e.id,
    entityName: e.name,
    entityMetadata: e.metadata,
    aliases: e.aliases.map((a) => ({
      id: a.id,
      mountAccessor: a.mount_accessor,
      name: a.name,
      metadata: a.metadata,
      customMetadata: a.custom_metadata ?? {},
    })),
    groupIds: all.map((g) => g.id),
    groupNames: all.map((g) => g.name),
    groupMetadata,
    policies: [...policies].sort(),
  };
  if (e.disabled) view.disabled = true;
  return view;
}
