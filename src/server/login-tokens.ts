/**
 * Token issuance for logins (Vault vault/request_handling.go handleLoginRequest + sdk/framework/lease.go
 * CalculateTTL): policies normalised, the TTL rules applied with their warnings, the identity entity
 * and alias found or created, an orphan token created, and the `auth` block answered exactly as Vault
 * shapes it (identity-wire.md section 1.5).
 */
import type { IdentityStore } from '../auth/identity.js';
import type { TokenStore } from '../auth/tokens.js';
import type { IssuedLogin, LoginAuth, MountInfo } from '../framework/context.js';
import { formatDuration, parseDuration } from '../framework/fields.js';
import { invalid } from '../framework/errors.js';

/** Vault's system default and max lease TTL (768h). */
export const SYSTEM_MAX_TTL = 768 * 3600;

/** Seconds of a mount config TTL (stored as seconds or a duration string); 0 when unset. */
export function mountTtl(v: unknown): number {
  if (v === undefined || v === null || v === '' || v === 'system') return 0;
  try {
    return parseDuration('ttl', v);
  } catch {
    return 0;
  }
}

/** Lower-case, trim, de-duplicate and sort policy names, adding `default` unless told not to. */
export function normalizePolicies(list: string[], noDefault: boolean): string[] {
  const set = new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (!noDefault) set.add('default');
  return [...set].sort();
}

/** Issue the token of a successful login on an auth mount. */
export async function issueLoginToken(tokens: TokenStore, identity: IdentityStore, mount: MountInfo, login: LoginAuth): Promise<IssuedLogin> {
  const policies = normalizePolicies(login.policies, login.noDefaultPolicy);
  if (policies.includes('root')) throw invalid('auth methods cannot create root tokens');
  const mountType = String(mount.config.token_type ?? 'default-service');
  // The mount's "service"/"batch" wins; its "default-*" applies when the role leaves the type open.
  const roleType = login.tokenType === 'default' || login.tokenType === '' || login.tokenType === undefined ? null : login.tokenType;
  const chosen = mountType === 'service' || mountType === 'batch' ? mountType : (roleType ?? (mountType.endsWith('batch') ? 'batch' : 'service'));
  const type: 'service' | 'batch' = chosen === 'batch' ? 'batch' : 'service';
  const warnings: string[] = [];
  const mountMax = mountTtl(mount.config.max_lease_ttl) || SYSTEM_MAX_TTL;
  const mountDefault = mountTtl(mount.config.default_lease_ttl) || SYSTEM_MAX_TTL;
  let maxTtl = login.maxTtl && login.maxTtl < mountMax ? login.maxTtl : mountMax;
  if (login.explicitMaxTtl && login.explicitMaxTtl < maxTtl) maxTtl = login.explicitMaxTtl;
  let ttl = 0;
  let period = login.period;
  if (period) {
    // Only an explicit max bounds a periodic token's lifetime; the period itself is capped by the max.
    if (period > maxTtl) {
      warnings.push(`period of "${formatDuration(period)}" exceeded the effective max_ttl of "${formatDuration(maxTtl)}"; period value is capped accordingly`);
      period = maxTtl;
    }
  } else {
    ttl = login.ttl || mountDefault;
    if (ttl > maxTtl) {
      warnings.push(`TTL of "${formatDuration(ttl)}" exceeded the effective max_ttl of "${formatDuration(maxTtl)}"; TTL value is capped accordingly`);
      ttl = maxTtl;
    }
  }
  if (type === 'batch') {
    // (The TTL is already bounded by the explicit max above; a batch token stores no explicit max.)
    if (period || login.numUses) throw invalid(`batch tokens cannot have ${period ? '"period"' : '"num_uses"'} set`);
  }
  const mountName = mount.path.replace(/^auth\//, '').replace(/\//g, '-');
  const displayName = (mountName + login.displayName).replace(/-+$/, '');
  const entity = await identity.entityForLogin({ accessor: mount.accessor, path: mount.path, type: mount.type }, login.alias, login.groupAliases);
  const { id, entry } = await tokens.create({
    type,
    policies,
    ttl,
    period: type === 'batch' ? undefined : period,
    explicit_max_ttl: type === 'batch' ? undefined : login.explicitMaxTtl,
    renewable: type !== 'batch',
    num_uses: type === 'batch' ? undefined : login.numUses,
    display_name: displayName,
    meta: login.metadata,
    orphan: true,
    path: login.path,
    entity_id: entity.id,
    role: login.role,
    mount_accessor: mount.accessor,
    max_ttl: period ? 0 : maxTtl,
    bound_cidrs: login.boundCidrs,
  });
  return {
    auth: {
      client_token: id,
      accessor: entry.accessor,
      policies,
      token_policies: policies,
      metadata: login.metadata,
      lease_duration: Math.round(entry.ttl),
      renewable: entry.renewable,
      entity_id: entity.id,
      token_type: type,
      orphan: true,
      mfa_requirement: null,
      num_uses: entry.num_uses,
    },
    warnings,
  };
}
