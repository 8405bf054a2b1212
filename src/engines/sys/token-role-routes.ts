/** The `auth/token/roles` routes: list, create, read, update and delete token roles (Vault's token auth method). */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { defaultTokenRole, type TokenRole } from '../../auth/token-roles.js';
import type { TokenParts } from './sys-parts.js';

const route = routesFor<TokenParts>();

/** Vault's default token TTL (768h) for tokens without an explicit ttl, except root tokens. */
const DEFAULT_TTL = 768 * 3600;

const roleFields = {
  role_name: f.name('Token role name'),
  allowed_policies: f.strings('Policies tokens of this role may have (also the default set)'),
  disallowed_policies: f.strings('Policies tokens of this role may never have'),
  allowed_policies_glob: f.strings('Glob patterns of allowed policies'),
  disallowed_policies_glob: f.strings('Glob patterns of disallowed policies'),
  allowed_entity_aliases: f.strings('Entity aliases tokens may be created for (globs)'),
  orphan: f.bool('Tokens are orphans'),
  renewable: f.bool('Tokens are renewable (default true)'),
  path_suffix: f.string('Suffix of the creation path (revocation by prefix)'),
  token_period: f.duration('Period of the tokens (periodic tokens)'),
  period: f.duration('Deprecated: use token_period'),
  token_explicit_max_ttl: f.duration('Hard lifetime cap'),
  explicit_max_ttl: f.duration('Deprecated: use token_explicit_max_ttl'),
  token_bound_cidrs: f.strings('CIDR blocks the tokens may be used from'),
  bound_cidrs: f.strings('Deprecated: use token_bound_cidrs'),
  token_no_default_policy: f.bool('Do not add the default policy'),
  token_num_uses: f.int('Uses of each token'),
  token_type: f.string(
    'service, batch, default-service or default-batch (the default when a create call names no type)',
  ),
};

function tokenRoleView(r: TokenRole): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: r.name,
    allowed_policies: r.allowed_policies,
    disallowed_policies: r.disallowed_policies,
    allowed_policies_glob: r.allowed_policies_glob,
    disallowed_policies_glob: r.disallowed_policies_glob,
    allowed_entity_aliases: r.allowed_entity_aliases,
    orphan: r.orphan,
    renewable: r.renewable,
    path_suffix: r.path_suffix,
    period: r.token_period,
    token_period: r.token_period,
    explicit_max_ttl: r.token_explicit_max_ttl,
    token_explicit_max_ttl: r.token_explicit_max_ttl,
    token_type: r.token_type,
    token_no_default_policy: r.token_no_default_policy,
  };
  if (r.token_bound_cidrs.length) {
    out.token_bound_cidrs = r.token_bound_cidrs;
    out.bound_cidrs = r.token_bound_cidrs;
  }
  if (r.token_num_uses) out.token_num_uses = r.token_num_uses;
  return out;
}

/** Routes of the token roles, listed among the token auth method's routes (token-routes.ts). */
export const tokenRoleRoutes: AnyRoute[] = [
  route({
    path: 'roles',
    summary: 'List token roles',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.tokenRoles.list() } }) },
  }),
  route({
    path: 'roles/:role_name',
    summary: 'Create, read, update or delete a token role',
    fields: roleFields,
    exists: async ({ engine, data }) => (await engine.tokenRoles.get(data.role_name.toLowerCase())) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const r = await engine.tokenRoles.get(data.role_name.toLowerCase());
        return r ? { data: tokenRoleView(r) } : undefined;
      },
      update: async ({ engine, data }) => {
        const name = data.role_name.toLowerCase();
        if (!/^\w(?:[\w.-]*\w)?$/.test(name)) throw invalid('role_name', 'must be letters, digits, "_", "-" or "."');
        const r = (await engine.tokenRoles.get(name)) ?? defaultTokenRole(name);
        const warnings: string[] = [];
        const norm = (l: string[]) => [...new Set(l.map((p) => p.trim().toLowerCase()).filter(Boolean))].sort();
        if (data.allowed_policies) r.allowed_policies = norm(data.allowed_policies);
        if (data.disallowed_policies) r.disallowed_policies = norm(data.disallowed_policies);
        if (data.allowed_policies_glob) r.allowed_policies_glob = norm(data.allowed_policies_glob);
        if (data.disallowed_policies_glob) r.disallowed_policies_glob = norm(data.disallowed_policies_glob);
        if (data.allowed_entity_aliases)
          r.allowed_entity_aliases = data.allowed_entity_aliases.map((x) => x.toLowerCase());
        if (data.orphan !== undefined) r.orphan = data.orphan;
        if (data.renewable !== undefined) r.renewable = data.renewable;
        if (data.path_suffix !== undefined) {
          if (data.path_suffix.includes('..') || !/^[\w./-]*$/.test(data.path_suffix))
            throw invalid('path_suffix', 'must not contain ".." and may use letters, digits, "_", "-", "." and "/"');
          r.path_suffix = data.path_suffix.replace(/^\/+|\/+$/g, '');
        }
        const pick = <T>(neu: T | undefined, old: T | undefined, name: string): T | undefined => {
          if (neu !== undefined && old !== undefined)
            warnings.push(`Both '${name}' and its deprecated alias were given; the deprecated value was ignored`);
          return neu ?? old;
        };
        const period = pick(data.token_period, data.period, 'token_period');
        if (period !== undefined) r.token_period = period;
        const emt = pick(data.token_explicit_max_ttl, data.explicit_max_ttl, 'token_explicit_max_ttl');
        if (emt !== undefined) r.token_explicit_max_ttl = emt;
        const cidrs = pick(data.token_bound_cidrs, data.bound_cidrs, 'token_bound_cidrs');
        if (cidrs !== undefined) r.token_bound_cidrs = cidrs;
        if (data.token_no_default_policy !== undefined) r.token_no_default_policy = data.token_no_default_policy;
        if (data.token_num_uses !== undefined) {
          if (data.token_num_uses < 0) throw invalid("'token_num_uses' cannot be negative");
          r.token_num_uses = data.token_num_uses;
        }
        if (data.token_type !== undefined) {
          if (!['service', 'batch', 'default-service', 'default-batch', 'default', ''].includes(data.token_type))
            throw invalid(`invalid 'token_type' value ${JSON.stringify(data.token_type)}`);
          r.token_type =
            data.token_type === 'service' || data.token_type === 'batch' || data.token_type === 'default-batch'
              ? data.token_type
              : 'default-service';
        }
        if (r.token_type === 'batch' || r.token_type === 'default-batch') {
          if (r.token_period)
            throw invalid("'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens");
          if (r.token_num_uses)
            throw invalid(
              "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
            );
        }
        if (r.token_explicit_max_ttl > DEFAULT_TTL)
          warnings.push(
            'Given explicit max TTL is greater than system/mount allowed value; tokens created with this role will fail to be created',
          );
        await engine.tokenRoles.put(r);
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => {
        await engine.tokenRoles.delete(data.role_name.toLowerCase());
      },
    },
  }),
];
