/**
 * The `token_*` fields every auth role carries (hashicorp/vault sdk/helper/tokenutil/tokenutil.go),
 * with their deprecated aliases, validation messages and read view, and the step from a role to the
 * token store's LoginAuth.
 */
import { invalid } from '../../framework/errors.js';
import { f, formatDuration } from '../../framework/fields.js';
import type { LoginAuth, MountInfo } from '../../framework/context.js';
import { isCidr } from './cidr.js';

/** Stored token parameters of a role. */
export interface TokenParams {
  token_policies: string[];
  token_ttl: number;
  token_max_ttl: number;
  token_explicit_max_ttl: number;
  token_period: number;
  token_bound_cidrs: string[];
  token_no_default_policy: boolean;
  token_num_uses: number;
  /** "default", "service" or "batch". */
  token_type: string;
}

/** Defaults of a new role's token parameters. */
export function defaultTokenParams(): TokenParams {
  return {
    token_policies: [],
    token_ttl: 0,
    token_max_ttl: 0,
    token_explicit_max_ttl: 0,
    token_period: 0,
    token_bound_cidrs: [],
    token_no_default_policy: false,
    token_num_uses: 0,
    token_type: 'default',
  };
}

/** Route fields of the token parameters (and their deprecated aliases). */
export const tokenFields = {
  token_policies: f.strings('Policies of issued tokens (comma list)'),
  policies: f.strings('Deprecated: use token_policies'),
  token_ttl: f.duration('Initial TTL of issued tokens'),
  ttl: f.duration('Deprecated: use token_ttl'),
  token_max_ttl: f.duration('Max TTL of issued tokens'),
  max_ttl: f.duration('Deprecated: use token_max_ttl'),
  token_explicit_max_ttl: f.duration('Hard lifetime cap of issued tokens'),
  token_period: f.duration('Period of issued tokens (periodic tokens)'),
  period: f.duration('Deprecated: use token_period'),
  token_bound_cidrs: f.strings('CIDR blocks issued tokens may be used from'),
  bound_cidrs: f.strings('Deprecated: use token_bound_cidrs'),
  token_no_default_policy: f.bool('Do not add the default policy'),
  token_num_uses: f.int('Uses of issued tokens (0 = unlimited)'),
  num_uses: f.int('Deprecated: use token_num_uses'),
  token_type: f.string('service, batch or default'),
};

type TokenInput = Record<string, unknown>;

/**
 * Merge request fields into `p` (tokenutil ParseTokenFields): a new name wins over its alias; returns
 * warnings. Throws 400 with Vault's messages.
 */
export function parseTokenParams(p: TokenParams, d: TokenInput, mount: MountInfo): string[] {
  const warnings: string[] = [];
  const pick = <T>(a: unknown, b: unknown): T | undefined => (a !== undefined ? (a as T) : (b as T | undefined));
  const policies = pick<string[]>(d.token_policies, d.policies);
  if (policies) p.token_policies = [...new Set(policies.map((x) => x.trim().toLowerCase()).filter(Boolean))].sort();
  const ttl = pick<number>(d.token_ttl, d.ttl);
  if (ttl !== undefined) p.token_ttl = ttl;
  const maxTtl = pick<number>(d.token_max_ttl, d.max_ttl);
  if (maxTtl !== undefined) p.token_max_ttl = maxTtl;
  if (d.token_explicit_max_ttl !== undefined) p.token_explicit_max_ttl = d.token_explicit_max_ttl as number;
  const period = pick<number>(d.token_period, d.period);
  if (period !== undefined) p.token_period = period;
  const cidrs = pick<string[]>(d.token_bound_cidrs, d.bound_cidrs);
  if (cidrs) {
    const list = cidrs.map((c) => c.trim()).filter(Boolean);
    const bad = list.find((c) => !isCidr(c));
    if (bad !== undefined) throw invalid('token_bound_cidrs', `invalid CIDR block "${bad}"`);
    p.token_bound_cidrs = list;
  }
  if (d.token_no_default_policy !== undefined) p.token_no_default_policy = d.token_no_default_policy as boolean;
  const uses = pick<number>(d.token_num_uses, d.num_uses);
  if (uses !== undefined) {
    if (uses < 0) throw invalid("'token_num_uses' cannot be negative");
    p.token_num_uses = uses;
  }
  if (d.token_type !== undefined) {
    const t = String(d.token_type);
    if (t === 'default-service') {
      p.token_type = 'service';
      warnings.push('default-service has no useful meaning; adjusting to service');
    } else if (t === 'default-batch') {
      p.token_type = 'batch';
      warnings.push('default-batch has no useful meaning; adjusting to batch');
    } else if (['service', 'batch', 'default', ''].includes(t)) p.token_type = t || 'default';
    else throw invalid(`invalid 'token_type' value "${t}"`);
  }
  if (p.token_type === 'batch') {
    if (p.token_period)
      throw invalid("'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens");
    if (p.token_num_uses)
      throw invalid(
        "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
      );
  }
  if (p.token_max_ttl && p.token_ttl > p.token_max_ttl)
    throw invalid("'token_ttl' cannot be greater than 'token_max_ttl'");
  const mountMax = mountMaxTtl(mount);
  if (p.token_max_ttl > mountMax)
    warnings.push(
      "token_max_ttl is greater than the backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
    );
  if (p.token_period > mountMax)
    throw invalid(
      `period of "${formatDuration(p.token_period)}" is greater than the backend's maximum lease TTL of "${formatDuration(mountMax)}"`,
    );
  return warnings;
}

/** The mount's max lease TTL in seconds (768h when unset). */
export function mountMaxTtl(mount: MountInfo): number {
  const v = mount.config.max_lease_ttl;
  return typeof v === 'number' && v > 0 ? v : 768 * 3600;
}

/** The token fields of a role read (integer seconds; `[]` for empty lists). */
export function tokenParamsView(p: TokenParams): Record<string, unknown> {
  return {
    token_bound_cidrs: p.token_bound_cidrs,
    token_explicit_max_ttl: p.token_explicit_max_ttl,
    token_max_ttl: p.token_max_ttl,
    token_no_default_policy: p.token_no_default_policy,
    token_num_uses: p.token_num_uses,
    token_period: p.token_period,
    token_policies: p.token_policies,
    token_ttl: p.token_ttl,
    token_type: p.token_type,
  };
}

/** The LoginAuth of a role's token parameters. */
export function loginAuthOf(
  p: TokenParams,
  rest: Pick<LoginAuth, 'path' | 'displayName' | 'metadata' | 'alias' | 'role'> & {
    groupAliases?: string[];
    boundCidrs?: string[];
  },
): LoginAuth {
  // Fields spelled out (no object spread): this runs on every login, and a spread of an object of
  // varying shape was the most expensive line of the AppRole login in the bench profile.
  const out: LoginAuth = {
    path: rest.path,
    displayName: rest.displayName,
    metadata: rest.metadata,
    alias: rest.alias,
    policies: p.token_policies,
    noDefaultPolicy: p.token_no_default_policy,
    ttl: p.token_ttl,
    maxTtl: p.token_max_ttl,
    period: p.token_period,
    explicitMaxTtl: p.token_explicit_max_ttl,
    numUses: p.token_num_uses,
    boundCidrs: rest.boundCidrs ?? p.token_bound_cidrs,
    tokenType: p.token_type,
  };
  if (rest.role !== undefined) out.role = rest.role;
  if (rest.groupAliases !== undefined) out.groupAliases = rest.groupAliases;
  return out;
}
