/** The `auth/token/` routes: create, look up, renew and revoke tokens (Vault's token auth method); roles are in token-role-routes.ts. */
import { denied, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute, type Reply } from '../../framework/route.js';
import type { RequestContext } from '../../framework/context.js';
import type { TokenEntry } from '../../auth/tokens.js';
import type { TokenRole } from '../../auth/token-roles.js';
import { mountTtl, tokenLifetime } from '../../auth/token-ttl.js';
import type { TokenParts } from './sys-parts.js';
import { partsRequired, type PartsModule } from './with-parts.js';
import { tokenRoleRoutes } from './token-role-routes.js';

const route = routesFor<TokenParts>();

function rfc3339(sec: number): string {
  return new Date(Math.round(sec * 1000)).toISOString().replace('.000Z', 'Z');
}

async function lookupData(parts: TokenParts, e: TokenEntry, id: string | undefined): Promise<Record<string, unknown>> {
  const now = parts.clock.now() / 1000;
  const out: Record<string, unknown> = {
    accessor: e.accessor,
    creation_time: Math.floor(e.creation_time),
    creation_ttl: Math.round(e.ttl),
    display_name: e.display_name,
    entity_id: e.entity_id ?? '',
    expire_time: e.expire_time ? rfc3339(e.expire_time) : null,
    explicit_max_ttl: e.explicit_max_ttl,
    id: id ?? '',
    issue_time: rfc3339(e.creation_time),
    meta: Object.keys(e.meta).length ? e.meta : null,
    num_uses: e.num_uses,
    orphan: e.orphan,
    path: e.path ?? 'auth/token/create',
    policies: e.policies,
    renewable: e.renewable,
    ttl: e.expire_time ? Math.max(0, Math.round(e.expire_time - now)) : 0,
    type: e.type,
  };
  // The entity's and its groups' policies, when it has any (Vault's token lookup).
  const identityPolicies = e.entity_id ? (await parts.identity.tokenIdentity(e.entity_id))?.policies : undefined;
  if (identityPolicies?.length) out.identity_policies = identityPolicies;
  if (e.period) out.period = e.period;
  if (e.role) out.role = e.role;
  if (e.bound_cidrs?.length) out.bound_cidrs = e.bound_cidrs;
  if (e.last_renewal_time) {
    out.last_renewal_time = Math.floor(e.last_renewal_time);
    out.last_renewal = rfc3339(e.last_renewal_time);
  }
  return out;
}

function authBlock(id: string, e: TokenEntry): Record<string, unknown> {
  return {
    client_token: id,
    accessor: e.accessor,
    policies: e.policies,
    token_policies: e.policies,
    metadata: Object.keys(e.meta).length ? e.meta : null,
    lease_duration: Math.round(
      e.expire_time
        ? e.expire_time - e.creation_time - (e.last_renewal_time ? e.last_renewal_time - e.creation_time : 0)
        : 0,
    ),
    renewable: e.renewable,
    entity_id: e.entity_id ?? '',
    token_type: e.type,
    orphan: e.orphan,
    mfa_requirement: null,
    num_uses: e.num_uses,
  };
}

/** The entry of `token`: 400 when missing, 403 "bad token" when unknown or expired (as Vault answers). */
async function entryOf(parts: TokenParts, token: string | undefined, self = false): Promise<TokenEntry> {
  if (!token) throw invalid('missing token ID');
  // The caller's own token may be on its last use (spent during this very request).
  const e = await parts.tokens.lookup(token, { includeSpent: self });
  if (!e) throw denied('bad token');
  return e;
}

/** Renew per Vault's rules; 400 `lease is not renewable` for a non-renewable token. */
async function renewEntry(
  parts: TokenParts,
  e: TokenEntry,
  increment: number | undefined,
  gone: () => Error,
): Promise<TokenEntry> {
  if (e.type === 'batch') throw invalid('batch tokens cannot be renewed');
  if (!e.renewable) throw invalid('lease is not renewable');
  // null: revoked or expired since it was looked up; an expired token is gone, never renewed back.
  const renewed = await parts.tokens.renew(e, increment);
  if (!renewed) throw gone();
  return renewed;
}

const createFields = {
  id: f.string('Token id to use (root or sudo only)').sensitive(),
  role_name: f.string('Token role to create against'),
  policies: f.strings("Policies of the new token (subset of the caller's unless root, sudo or a role allows them)"),
  ttl: f.duration(
    'Time to live, e.g. "1h"; 0 or unset: the mount default (768h), capped at the mount max; only a root token without one never expires',
  ),
  lease: f.duration('Deprecated: use ttl'),
  explicit_max_ttl: f.duration('Hard limit on the lifetime, renewals included'),
  renewable: f.bool('Whether the token can be renewed').default(true),
  num_uses: f.int('Number of uses; 0 is unlimited').min(0).default(0),
  display_name: f.string('Display name (stored as token-<name>)').default(''),
  meta: f.stringMap('Metadata'),
  no_parent: f.bool('Create an orphan token (root or sudo)').default(false),
  no_default_policy: f.bool('Do not attach the default policy').default(false),
  period: f.duration('Periodic token: every renewal sets the TTL to this (root or sudo, or through a role)'),
  type: f.string(
    "Token type: service (stored, renewable) or batch (not stored; no renewal, revocation or children); default: the role's, else service",
  ),
  entity_alias: f.string('Entity alias (with a role allowing it)'),
};

type CreateData = { [K in keyof typeof createFields]: unknown } & Record<string, unknown>;

function globMatch(pattern: string, v: string): boolean {
  return new RegExp(
    '^' +
      pattern
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*') +
      '$',
  ).test(v);
}

function fmt(list: string[]): string {
  return JSON.stringify(list);
}

/** The type of the new token: the role's when it fixes one, else the request's, else the role's default, else service. */
function tokenType(data: Record<string, unknown>, role: TokenRole | null): 'service' | 'batch' {
  let type = (data.type as string | undefined) ?? '';
  if (role) {
    if (role.token_type === 'service' || role.token_type === 'batch') type = role.token_type;
    else if (type === '') type = role.token_type === 'default-batch' ? 'batch' : 'service';
  }
  if (type === '') type = 'service';
  if (type !== 'service' && type !== 'batch') throw invalid("invalid 'token_type' value");
  if (type === 'batch') {
    const bad = data.explicit_max_ttl ? 'explicit_max_ttl' : data.num_uses ? 'num_uses' : data.period ? 'period' : null;
    if (bad) throw invalid(`batch tokens cannot have ${JSON.stringify(bad)} set`);
  }
  return type;
}

/**
 * A role's bounds on the requested policies (`default` left out): its allowed policies (or globs),
 * else the parent's policies unless sudo; never a disallowed one, never root.
 */
function checkRolePolicies(role: TokenRole, check: string[], parentPolicies: string[], sudo: boolean): void {
  if (role.allowed_policies.length || role.allowed_policies_glob.length) {
    const ok = check.every(
      (p) => role.allowed_policies.includes(p) || role.allowed_policies_glob.some((g) => globMatch(g, p)),
    );
    if (!ok)
      throw invalid(
        `token policies (${fmt(check.sort())}) must be subset of the role's allowed policies (${fmt(role.allowed_policies)}) or glob policies (${fmt(role.allowed_policies_glob)})`,
      );
  } else if (!sudo) {
    const mine = new Set(parentPolicies);
    if (check.some((p) => !mine.has(p)))
      throw invalid(
        'policies',
        `child policies must be subset of parent: ${check.filter((p) => !mine.has(p)).join(', ')}`,
      );
  }
  for (const p of check) {
    if (role.disallowed_policies.includes(p) || role.disallowed_policies_glob.some((g) => globMatch(g, p)))
      throw invalid(`token policy ${JSON.stringify(p)} is disallowed by this role`);
  }
  if (check.includes('root')) throw invalid('root tokens may not be created from token roles');
}

/** The path recorded in the token entry (revocation by prefix goes by it). */
function creationPath(role: TokenRole | null, orphanPath: boolean): string {
  return role
    ? `auth/token/create/${role.name}${role.path_suffix ? `/${role.path_suffix}` : ''}`
    : orphanPath
      ? 'auth/token/create-orphan'
      : 'auth/token/create';
}

/**
 * Token creation (vault/token_store.go handleCreateCommon): the parent's policies bound a child's
 * unless the caller is root or has sudo on the path (or a token role allows the policies); orphans,
 * periodic tokens and custom ids need root or sudo unless a role grants them.
 */
async function createToken(
  ctx: RequestContext<TokenParts, CreateData>,
  orphanPath: boolean,
  roleName: string | undefined,
): Promise<Reply> {
  const { engine, token, fullPath } = ctx;
  const data = ctx.data as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const caller = token!;
  const sudo = caller.root || ctx.allowed('sudo', fullPath);
  const warnings: string[] = [];
  // Vault answers a batch parent before anything else (token_store.go handleCreateCommon).
  if (caller.batch) throw invalid('batch tokens cannot create more tokens');
  const role: TokenRole | null = roleName ? await engine.tokenRoles.get(roleName.toLowerCase()) : null;
  if (roleName && !role) throw invalid('unknown role');
  const batch = tokenType(data, role) === 'batch';
  if (data.entity_alias && !role) throw invalid("'entity_alias' is only allowed in combination with token role");
  if (
    data.entity_alias &&
    role &&
    !role.allowed_entity_aliases.some((p) => globMatch(p.toLowerCase(), String(data.entity_alias).toLowerCase()))
  )
    throw invalid("invalid 'entity_alias' value");
  if (data.id !== undefined && !sudo) throw invalid('root or sudo privileges required to specify token id');
  if (typeof data.id === 'string' && data.id.includes('.')) throw invalid('token IDs can not contain period');
  if (data.id)
    warnings.push(
      'Supplying a custom ID for the token uses the weaker SHA1 hashing instead of the more secure SHA2-256 HMAC for token obfuscation. SHA1 hashed tokens on the wire leads to less secure lookups.',
    );
  const norm = (l: string[]) => [...new Set(l.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))];
  let requested = data.policies ? norm(data.policies) : null;
  let policies: string[];
  let orphan = orphanPath || data.no_parent === true;
  let period: number = data.period ?? 0;
  let explicitMax: number = data.explicit_max_ttl ?? 0;
  let renewable: boolean = data.renewable;
  let numUses: number = data.num_uses;
  const noDefault: boolean = data.no_default_policy || (role?.token_no_default_policy ?? false);
  if (role) {
    if (!requested || requested.length === 0) requested = norm(role.allowed_policies);
    checkRolePolicies(
      role,
      requested.filter((p) => p !== 'default'),
      caller.policies,
      sudo,
    );
    orphan = role.orphan || (orphan && sudo);
    if (!role.renewable) renewable = false;
    if (role.token_period) {
      if (period && period !== role.token_period)
        warnings.push('Role period is set and overrides the requested period');
      period = period ? Math.min(period, role.token_period) : role.token_period;
    }
    if (role.token_explicit_max_ttl) {
      if (explicitMax && explicitMax > role.token_explicit_max_ttl)
        warnings.push('Explicit max TTL specified both during creation call and in role; using the lesser value');
      explicitMax = explicitMax ? Math.min(explicitMax, role.token_explicit_max_ttl) : role.token_explicit_max_ttl;
    }
    if (role.token_num_uses && (!numUses || numUses > role.token_num_uses)) numUses = role.token_num_uses;
  } else {
    requested ??= norm(caller.policies);
    if (requested.includes('root') && !caller.root)
      throw invalid('policies', 'root tokens may not be created without parent token being root');
    if (!sudo) {
      const mine = new Set(caller.policies);
      const extra = requested.filter((p) => p !== 'default' && !mine.has(p));
      if (extra.length) throw invalid('policies', `child policies must be subset of parent: ${extra.join(', ')}`);
      if (orphan && !orphanPath) throw invalid('root or sudo privileges required to create orphan token');
      if (period) throw invalid('root or sudo privileges required to create periodic token');
    }
  }
  policies = requested;
  if (!noDefault && !policies.includes('root') && !policies.includes('default')) policies = [...policies, 'default'];
  if (noDefault) policies = policies.filter((p) => p !== 'default');
  policies.sort();
  // Batch tokens cannot be revoked, so there are no root batch tokens.
  if (batch && policies.includes('root')) throw invalid('batch tokens cannot be root tokens');
  for (const p of policies)
    if (p !== 'root' && p !== 'default' && !(await engine.policies.get(p)))
      warnings.push(`Policy ${JSON.stringify(p)} does not exist`);
  // One rule for every issued token (auth/token-ttl.ts): ttl 0 means the mount's default, a longer
  // one is capped at the mount's max; only a root token asked for without a TTL never expires.
  const life = tokenLifetime({
    ttl: data.ttl ?? data.lease ?? 0,
    period: batch ? 0 : period,
    explicitMaxTtl: batch ? 0 : explicitMax,
    roleMaxTtl: 0,
    mountDefaultTtl: mountTtl(ctx.mount.config.default_lease_ttl),
    mountMaxTtl: mountTtl(ctx.mount.config.max_lease_ttl),
    rootPolicy: policies.includes('root'),
  });
  warnings.push(...life.warnings);
  if (life.ttl === 0) {
    // Vault: a non-expiring root token comes only from a non-expiring parent.
    const parent = await engine.tokens.lookup(caller.id, { includeSpent: true });
    if (parent?.expire_time) throw invalid('expiring root tokens cannot create non-expiring root tokens');
  }
  const path = creationPath(role, orphanPath);
  if (batch && data.id) throw invalid('batch tokens cannot have a custom id');
  const { id, entry } = await engine.tokens.create({
    type: batch ? 'batch' : 'service',
    id: data.id || undefined,
    policies,
    ttl: life.period ? 0 : life.ttl,
    period: batch ? undefined : life.period,
    explicit_max_ttl: batch ? undefined : explicitMax,
    renewable: !batch && renewable && life.ttl > 0,
    num_uses: batch ? undefined : numUses,
    // Vault prefixes a given name with "token-" and names an unnamed token "token".
    display_name: data.display_name ? `token-${String(data.display_name).replace(/[^\w-]/g, '-')}` : 'token',
    meta: data.meta,
    orphan,
    parent_accessor: orphan ? '' : caller.accessor,
    path,
    role: role?.name,
    bound_cidrs: role?.token_bound_cidrs,
    // Renewals stay within the mount's max from creation (periodic and non-expiring tokens: none).
    max_ttl: life.maxTtl,
  });
  return { auth: authBlock(id, entry), data: null, ...(warnings.length ? { warnings } : {}) };
}

const TIDY_WARNING =
  "Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs.";

/** Routes of the token auth method. */
export const tokenRoutes: AnyRoute[] = [
  route({
    path: 'create',
    summary: 'Create a token',
    fields: createFields,
    operations: { update: (ctx) => createToken(ctx as never, false, undefined) },
    cli: {
      command: 'token create',
      examples: [
        'keyhold token create --policies transit-user --ttl 1h',
        'keyhold token create -role=ci -period=24h -orphan',
      ],
    },
  }),
  route({
    path: 'create-orphan',
    summary: 'Create an orphan token (no sudo needed)',
    fields: createFields,
    operations: { update: (ctx) => createToken(ctx as never, true, undefined) },
  }),
  route({
    path: 'create/:role_name',
    summary: 'Create a token against a token role',
    fields: { ...createFields, role_name: f.name('Token role') },
    operations: { update: (ctx) => createToken(ctx as never, false, ctx.data.role_name) },
  }),
  ...tokenRoleRoutes,
  route({
    path: 'lookup-self',
    summary: "Look up the calling token's properties",
    fields: {},
    operations: {
      read: async ({ engine, token }) => ({
        data: await lookupData(engine, await entryOf(engine, token!.id, true), token!.id),
      }),
      update: async ({ engine, token }) => ({
        data: await lookupData(engine, await entryOf(engine, token!.id, true), token!.id),
      }),
    },
  }),
  route({
    path: 'lookup',
    summary: 'Look up a token',
    fields: { token: f.string('Token to look up').sensitive() },
    operations: {
      read: async ({ engine, data }) => ({
        data: await lookupData(engine, await entryOf(engine, data.token), data.token),
      }),
      update: async ({ engine, data }) => ({
        data: await lookupData(engine, await entryOf(engine, data.token), data.token),
      }),
    },
    cli: { command: 'token lookup' },
  }),
  route({
    path: 'lookup-accessor',
    summary: 'Look up a token by accessor',
    fields: { accessor: f.string('Token accessor') },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.accessor) throw invalid('missing accessor');
        const e = await engine.tokens.lookupAccessor(data.accessor);
        if (!e) throw invalid('invalid accessor');
        return { data: await lookupData(engine, e, undefined) };
      },
    },
  }),
  route({
    path: 'renew-self',
    summary: 'Renew the calling token',
    fields: { increment: f.duration('Requested extension') },
    operations: {
      update: async ({ engine, data, token }) => {
        const r = await renewEntry(engine, await entryOf(engine, token!.id, true), data.increment, () =>
          denied('bad token'),
        );
        return { auth: authBlock(token!.id, r), data: null };
      },
    },
  }),
  route({
    path: 'renew',
    summary: 'Renew a token',
    fields: { token: f.string('Token to renew').sensitive(), increment: f.duration('Requested extension') },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.token) throw invalid('missing token ID');
        const e = await engine.tokens.lookup(data.token);
        if (!e) throw invalid('token not found');
        const r = await renewEntry(engine, e, data.increment, () => invalid('token not found'));
        return { auth: authBlock(data.token, r), data: null };
      },
    },
  }),
  route({
    path: 'renew-accessor',
    summary: 'Renew a token by accessor',
    fields: { accessor: f.string('Token accessor'), increment: f.duration('Requested extension') },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.accessor) throw invalid('missing accessor');
        const e = await engine.tokens.lookupAccessor(data.accessor);
        if (!e) throw invalid('invalid accessor');
        const r = await renewEntry(engine, e, data.increment, () => invalid('invalid accessor'));
        return { auth: authBlock('', r), data: null };
      },
    },
  }),
  route({
    path: 'revoke-self',
    summary: 'Revoke the calling token',
    fields: {},
    operations: {
      update: async ({ engine, token }) => {
        await engine.tokens.revokeEntry(await entryOf(engine, token!.id, true));
      },
    },
  }),
  route({
    path: 'revoke',
    summary: 'Revoke a token and its children',
    fields: { token: f.string('Token to revoke').sensitive() },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.token) throw invalid('missing token ID');
        // Revoking an unknown or expired token succeeds (204): the outcome the caller wanted holds.
        const e = await engine.tokens.lookup(data.token);
        if (!e) return;
        await engine.tokens.revokeEntry(e);
      },
    },
    cli: { command: 'token revoke', confirm: true },
  }),
  route({
    path: 'revoke-orphan',
    summary: 'Revoke a token and make its children orphans (root or sudo)',
    fields: { token: f.string('Token to revoke').sensitive() },
    operations: {
      update: async ({ engine, data, token, allowed, fullPath }) => {
        // Vault checks sudo inside the handler (token_store.go handleRevokeOrphan), answering 400.
        if (!token!.root && !allowed('sudo', fullPath))
          throw invalid('root or sudo privileges required to revoke and orphan');
        if (!data.token) throw invalid('missing token ID');
        const e = await engine.tokens.lookup(data.token);
        if (!e) throw invalid('token to revoke not found');
        await engine.tokens.revokeEntry(e, { orphanChildren: true });
      },
    },
  }),
  route({
    path: 'revoke-accessor',
    summary: 'Revoke a token by accessor',
    fields: { accessor: f.string('Token accessor') },
    operations: {
      update: async ({ engine, data }) => {
        if (!data.accessor) throw invalid('missing accessor');
        const e = await engine.tokens.lookupAccessor(data.accessor);
        // Vault answers 200 with a warning: clients treat it as "already revoked".
        if (!e) return { data: null, warnings: ['No token found with this accessor'] };
        await engine.tokens.revokeEntry(e);
      },
    },
  }),
  route({
    path: 'accessors',
    summary: 'List token accessors (sudo)',
    fields: {},
    sudo: true,
    operations: {
      list: async ({ engine }) => {
        return { data: { keys: await engine.tokens.listAccessors() } };
      },
    },
  }),
  route({
    path: 'tidy',
    summary: 'Clean up expired token index entries',
    fields: {},
    operations: { update: () => ({ data: null, warnings: [TIDY_WARNING], status: 202 }) },
  }),
];

/** The token auth module, mounted at auth/token/; its instance is the core's token parts (`withParts`). */
export const tokenEngine: PartsModule<TokenParts> = {
  type: 'token',
  accessorPrefix: 'auth_token',
  description: 'token based credentials',
  routes: tokenRoutes,
  create: partsRequired('token'),
};
