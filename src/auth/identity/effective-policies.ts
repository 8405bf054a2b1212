/**
 * A token's effective policies (vault/request_handling.go): its own plus its identity policies, those
 * of its entity and of the entity's groups, direct and inherited. The identity store puts the identity
 * policies on the token's identity view (token-view.ts); never `root` (the store refuses it there).
 */
import type { TokenInfo } from '../../framework/context.js';

/** The policies to compile into a token's ACL. */
export function effectivePolicies(token: Pick<TokenInfo, 'policies' | 'identity'>): readonly string[] {
  const extra = token.identity?.policies;
  if (!extra?.length) return token.policies;
  return [...new Set([...token.policies, ...extra])];
}

/** True when the token has no policy at all (its capabilities are `deny` everywhere). */
export function hasNoPolicies(token: Pick<TokenInfo, 'policies' | 'identity'>): boolean {
  return token.policies.length === 0 && !token.identity?.policies?.length;
}
