/**
 * Token issuance for logins (Vault vault/request_handling.go handleLoginRequest + sdk/framework/lease.go
 * CalculateTTL): policies normalised, the TTL rules applied with their warnings, the identity entity
 * and alias found or created, an orphan token created, and the `auth` block answered exactly as Vault
 * shapes it (identity-wire.md section 1.5).
 */
import type { IdentityStore } from '../auth/identity.js';
import type { TokenStore } from '../auth/tokens.js';
import type { IssuedLogin, LoginAuth, MountInfo } from '../framework/context.js';
import { mountTtl, tokenLifetime } from '../auth/token-ttl.js';

export { mountTtl };
import { denied, invalid } from '../framework/errors.js';
import type { LoginGate } from '../auth/mfa/login-mfa.js';

/** Lower-case, trim, de-duplicate and sort policy names, adding `default` unless told not to. */
export function normalizePolicies(list: string[], noDefault: boolean): string[] {
  const set = new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (!noDefault) set.add('default');
  return [...set].sort();
}

/**
 * Issue the token of a successful login on an auth mount. With a login MFA `gate`, a login an
 * enforcement applies to answers `mfa_requirement` and its token is issued when MFA is validated
 * (Vault's order: the method authenticates, the entity is found, MFA, then the token).
 */
export async function issueLoginToken(
  tokens: TokenStore,
  identity: IdentityStore,
  mount: MountInfo,
  login: LoginAuth,
  gate?: LoginGate,
): Promise<IssuedLogin> {
  const policies = normalizePolicies(login.policies, login.noDefaultPolicy);
  if (policies.includes('root')) throw invalid('auth methods cannot create root tokens');
  const mountType = String(mount.config.token_type ?? 'default-service');
  // The mount's "service"/"batch" wins; its "default-*" applies when the role leaves the type open.
  const roleType =
    login.tokenType === 'default' || login.tokenType === '' || login.tokenType === undefined ? null : login.tokenType;
  const chosen =
    mountType === 'service' || mountType === 'batch'
      ? mountType
      : (roleType ?? (mountType.endsWith('batch') ? 'batch' : 'service'));
  const type: 'service' | 'batch' = chosen === 'batch' ? 'batch' : 'service';
  const life = tokenLifetime({
    ttl: login.ttl,
    period: login.period,
    explicitMaxTtl: login.explicitMaxTtl,
    roleMaxTtl: login.maxTtl,
    mountDefaultTtl: mountTtl(mount.config.default_lease_ttl),
    mountMaxTtl: mountTtl(mount.config.max_lease_ttl),
    rootPolicy: false,
  });
  const { warnings, period } = life;
  const ttl = period ? 0 : life.ttl;
  const maxTtl = life.maxTtl;
  if (type === 'batch') {
    // (The TTL is already bounded by the explicit max above; a batch token stores no explicit max.)
    if (period || login.numUses) throw invalid(`batch tokens cannot have ${period ? '"period"' : '"num_uses"'} set`);
  }
  const mountName = mount.path.replace(/^auth\//, '').replace(/\//g, '-');
  const displayName = (mountName + login.displayName).replace(/-+$/, '');
  const entity = await identity.entityForLogin(
    { accessor: mount.accessor, path: mount.path, type: mount.type },
    login.alias,
    login.groupAliases,
  );
  // A disabled entity gets no new token (Vault answers its logins 403).
  if (entity.disabled) throw denied();
  const finish = () =>
    createLoginToken(tokens, identity, login, {
      type,
      policies,
      ttl,
      period,
      maxTtl,
      displayName,
      entityId: entity.id,
      mount,
      warnings,
    });
  if (gate) {
    const required = await gate.requirement(mount, entity.id, finish);
    if (required) return required;
  }
  return finish();
}

/** What the token of a checked login is made of. */
interface LoginTokenSpec {
  type: 'service' | 'batch';
  policies: string[];
  ttl: number;
  period: number;
  maxTtl: number;
  displayName: string;
  entityId: string;
  mount: MountInfo;
  warnings: string[];
}

/** The token of a login whose checks (and MFA, when required) are done. */
async function createLoginToken(
  tokens: TokenStore,
  identity: IdentityStore,
  login: LoginAuth,
  t: LoginTokenSpec,
): Promise<IssuedLogin> {
  const { type, policies, ttl, period, maxTtl, displayName, mount, warnings } = t;
  const entity = { id: t.entityId };
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
  // Vault answers the entity's and its groups' policies as identity_policies, and both in policies.
  const identityPolicies =
    (identity.cachedTokenIdentity(entity.id) ?? (await identity.tokenIdentity(entity.id)))?.policies ?? [];
  return {
    auth: {
      client_token: id,
      accessor: entry.accessor,
      policies: identityPolicies.length ? [...new Set([...policies, ...identityPolicies])].sort() : policies,
      token_policies: policies,
      ...(identityPolicies.length ? { identity_policies: identityPolicies } : {}),
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
