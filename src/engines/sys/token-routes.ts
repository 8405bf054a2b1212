/** The `auth/token/` routes: create, look up, renew and revoke tokens (Vault's token auth method). */
import type { EngineModule } from '../../framework/engine.js';
import { denied, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { TokenEntry } from '../../auth/tokens.js';
import type { SysCore } from './sys-core.js';

const route = routesFor<SysCore>();

function rfc3339(sec: number): string {
  return new Date(Math.round(sec * 1000)).toISOString().replace('.000Z', 'Z');
}

function lookupData(core: SysCore, e: TokenEntry, id: string | undefined): Record<string, unknown> {
  const now = core.clock.now() / 1000;
  return {
    accessor: e.accessor,
    creation_time: Math.floor(e.creation_time),
    creation_ttl: e.ttl,
    display_name: e.display_name,
    entity_id: '',
    expire_time: e.expire_time ? rfc3339(e.expire_time) : null,
    explicit_max_ttl: e.explicit_max_ttl,
    id: id ?? '',
    issue_time: rfc3339(e.creation_time),
    meta: Object.keys(e.meta).length ? e.meta : null,
    num_uses: e.num_uses,
    orphan: e.orphan,
    path: 'auth/token/create',
    policies: e.policies,
    renewable: e.renewable,
    ttl: e.expire_time ? Math.max(0, Math.round(e.expire_time - now)) : 0,
    type: e.type,
  };
}

function authBlock(id: string, e: TokenEntry): Record<string, unknown> {
  return {
    client_token: id,
    accessor: e.accessor,
    policies: e.policies,
    token_policies: e.policies,
    metadata: Object.keys(e.meta).length ? e.meta : null,
    lease_duration: e.ttl,
    renewable: e.renewable,
    entity_id: '',
    token_type: 'service',
    orphan: e.orphan,
    mfa_requirement: null,
    num_uses: e.num_uses,
  };
}

/** The entry of `token`: 400 when missing, 403 "bad token" when unknown or expired (as Vault answers). */
async function entryOf(core: SysCore, token: string | undefined, self = false): Promise<TokenEntry> {
  if (!token) throw invalid('missing token ID');
  // The caller's own token may be on its last use (spent during this very request).
  const e = await core.tokens.lookup(token, { includeSpent: self });
  if (!e) throw denied('bad token');
  return e;
}

/** Vault's default token TTL (768h) for tokens without an explicit ttl, except root tokens. */
const DEFAULT_TTL = 768 * 3600;

const createFields = {
  policies: f.strings('Policies of the new token (subset of the caller\'s unless root)'),
  ttl: f.duration('Time to live, e.g. "1h"; 0 means no expiry for root callers'),
  explicit_max_ttl: f.duration('Hard limit on the lifetime, renewals included'),
  renewable: f.bool('Whether the token can be renewed').default(true),
  num_uses: f.int('Number of uses; 0 is unlimited').min(0).default(0),
  display_name: f.string('Display name (stored as token-<name>)').default(''),
  meta: f.stringMap('Metadata'),
  no_parent: f.bool('Create an orphan token (root only)').default(false),
  no_default_policy: f.bool('Do not attach the default policy').default(false),
  period: f.duration('Accepted for compatibility (treated as ttl)'),
  type: f.string('Token type; only service is supported').default('service'),
};

/** Routes of the token auth method. */
export const tokenRoutes: AnyRoute[] = [
  route({
    path: 'create(-orphan)',
    summary: 'Create a token',
    fields: createFields,
    operations: {
      update: async ({ engine, data, token, path }) => {
        const caller = token!;
        if (data.type !== 'service') throw invalid('type', 'only "service" tokens are supported');
        // Policy names are case-insensitive in Vault and stored lowercased.
        let policies = [...new Set((data.policies ?? caller.policies).map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))];
        if (!data.no_default_policy && !policies.includes('root') && !policies.includes('default')) policies = [...policies, 'default'];
        if (!caller.root) {
          const mine = new Set(caller.policies);
          const extra = policies.filter((p) => p !== 'default' && !mine.has(p));
          if (extra.length) throw invalid('policies', `child policies must be subset of parent: ${extra.join(', ')}`);
        }
        const orphan = data.no_parent || path === 'create-orphan';
        if (orphan && !caller.root && path !== 'create-orphan') throw denied('root or sudo privileges required to create orphan token');
        const ttl = data.ttl ?? data.period ?? (policies.includes('root') ? 0 : DEFAULT_TTL);
        const { id, entry } = await engine.tokens.create({
          policies,
          ttl,
          explicit_max_ttl: data.explicit_max_ttl ?? 0,
          renewable: data.renewable,
          num_uses: data.num_uses,
          // Vault prefixes a given name with "token-" and names an unnamed token "token".
          display_name: data.display_name ? `token-${data.display_name}` : 'token',
          meta: data.meta,
          orphan,
          parent_accessor: orphan ? '' : caller.accessor,
        });
        return { auth: authBlock(id, entry), data: null };
      },
    },
    cli: { command: 'token create', examples: ['keyhold token create --policies transit-user --ttl 1h'] },
  }),
  route({
    path: 'lookup-self',
    summary: "Look up the calling token's properties",
    fields: {},
    operations: {
      read: async ({ engine, token }) => ({ data: lookupData(engine, await entryOf(engine, token!.id, true), token!.id) }),
      update: async ({ engine, token }) => ({ data: lookupData(engine, await entryOf(engine, token!.id, true), token!.id) }),
    },
  }),
  route({
    path: 'lookup',
    summary: 'Look up a token',
    fields: { token: f.string('Token to look up').sensitive() },
    operations: {
      read: async ({ engine, data }) => ({ data: lookupData(engine, await entryOf(engine, data.token), data.token) }),
      update: async ({ engine, data }) => ({ data: lookupData(engine, await entryOf(engine, data.token), data.token) }),
    },
    cli: { command: 'token lookup' },
  }),
  route({
    path: 'lookup-accessor',
    summary: 'Look up a token by accessor',
    fields: { accessor: f.string('Token accessor').required() },
    operations: {
      update: async ({ engine, data }) => {
        const e = await engine.tokens.lookupAccessor(data.accessor);
        if (!e) throw invalid('accessor', 'invalid accessor');
        return { data: lookupData(engine, e, undefined) };
      },
    },
  }),
  route({
    path: 'renew-self',
    summary: 'Renew the calling token',
    fields: { increment: f.duration('Requested extension') },
    operations: {
      update: async ({ engine, data, token }) => {
        const e = await entryOf(engine, token!.id, true);
        if (!e.renewable) throw invalid('token', 'token is not renewable');
        const r = await engine.tokens.renew(e, data.increment);
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
        const e = await entryOf(engine, data.token);
        if (!e.renewable) throw invalid('token', 'token is not renewable');
        const r = await engine.tokens.renew(e, data.increment);
        return { auth: authBlock(data.token!, r), data: null };
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
    path: 'revoke(-orphan)',
    summary: 'Revoke a token (and, unless revoke-orphan, its children)',
    fields: { token: f.string('Token to revoke').sensitive() },
    operations: {
      update: async ({ engine, data, path }) => {
        if (!data.token) throw invalid('missing token ID');
        // Revoking an unknown or expired token succeeds (204): the outcome the caller wanted holds.
        const e = await engine.tokens.lookup(data.token);
        if (!e) return;
        await engine.tokens.revokeEntry(e, { orphanChildren: path === 'revoke-orphan' });
      },
    },
    cli: { command: 'token revoke', confirm: true },
  }),
  route({
    path: 'revoke-accessor',
    summary: 'Revoke a token by accessor',
    fields: { accessor: f.string('Token accessor').required() },
    operations: {
      update: async ({ engine, data }) => {
        const e = await engine.tokens.lookupAccessor(data.accessor);
        if (!e) throw invalid('accessor', 'invalid accessor');
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
];

/** The token auth module, mounted at auth/token/. */
export const tokenEngine: EngineModule<SysCore & { close?(): Promise<void> }> = {
  type: 'token',
  accessorPrefix: 'auth_token',
  description: 'token based credentials',
  routes: tokenRoutes,
  async create(env) {
    return env.core as unknown as SysCore;
  },
};
