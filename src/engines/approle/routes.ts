/** AppRole routes (identity-wire.md section 2.1): roles, role ids, secret ids, login, tidy. */
import { KeyholdError, invalid, notFound } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { tokenFields, tokenParamsView } from '../auth-common/token-params.js';
import { AppRoleEngine, roleName, type RoleEntry } from './approle-engine.js';

const route = routesFor<AppRoleEngine>();

const TIDY_WARNING =
  "Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs.";

const roleFields = {
  role_name: f.name('Role name (case-insensitive)'),
  bind_secret_id: f.bool('Require a secret_id at login (default true)'),
  secret_id_bound_cidrs: f.strings('CIDR blocks logins with secret ids may come from'),
  bound_cidr_list: f.strings('Deprecated: use secret_id_bound_cidrs'),
  secret_id_num_uses: f.int('Uses of each secret id (0 = unlimited)'),
  secret_id_ttl: f.duration('Lifetime of secret ids (0 = never expire)'),
  local_secret_ids: f.bool('Accepted at creation (single node: no effect)'),
  role_id: f.string('Custom role id'),
  ...tokenFields,
};

/** The role read view (path_role.go pathRoleRead). */
function roleView(r: RoleEntry): { data: Record<string, unknown>; warnings?: string[] } {
  const data: Record<string, unknown> = {
    bind_secret_id: r.bind_secret_id,
    local_secret_ids: r.local_secret_ids,
    secret_id_bound_cidrs: r.secret_id_bound_cidrs,
    secret_id_num_uses: r.secret_id_num_uses,
    secret_id_ttl: r.secret_id_ttl,
    ...tokenParamsView(r),
  };
  if (r.legacy_policies) data.policies = r.legacy_policies;
  if (r.legacy_period) data.period = r.legacy_period;
  const constrained = r.bind_secret_id || r.secret_id_bound_cidrs.length > 0 || r.token_bound_cidrs.length > 0;
  return constrained
    ? { data }
    : {
        data,
        warnings: [
          'Role does not have any constraints set on it. Updates to this role will require a constraint to be set',
        ],
      };
}

/** Per-field endpoints (for ACL delegation): URL segment -> the role fields it reads and writes. */
const FIELD_ENDPOINTS: Record<
  string,
  { read: (r: RoleEntry) => Record<string, unknown>; names: string[]; reset: Record<string, unknown> }
> = {
  policies: {
    read: (r) => ({ policies: r.token_policies, token_policies: r.token_policies }),
    names: ['policies', 'token_policies'],
    reset: { token_policies: [] },
  },
  'secret-id-num-uses': {
    read: (r) => ({ secret_id_num_uses: r.secret_id_num_uses }),
    names: ['secret_id_num_uses'],
    reset: { secret_id_num_uses: 0 },
  },
  'secret-id-ttl': {
    read: (r) => ({ secret_id_ttl: r.secret_id_ttl }),
    names: ['secret_id_ttl'],
    reset: { secret_id_ttl: 0 },
  },
  'token-ttl': { read: (r) => ({ token_ttl: r.token_ttl }), names: ['token_ttl'], reset: { token_ttl: 0 } },
  'token-max-ttl': {
    read: (r) => ({ token_max_ttl: r.token_max_ttl }),
    names: ['token_max_ttl'],
    reset: { token_max_ttl: 0 },
  },
  'token-num-uses': {
    read: (r) => ({ token_num_uses: r.token_num_uses }),
    names: ['token_num_uses'],
    reset: { token_num_uses: 0 },
  },
  'bind-secret-id': {
    read: (r) => ({ bind_secret_id: r.bind_secret_id }),
    names: ['bind_secret_id'],
    reset: { bind_secret_id: true },
  },
  'secret-id-bound-cidrs': {
    read: (r) => ({ secret_id_bound_cidrs: r.secret_id_bound_cidrs }),
    names: ['secret_id_bound_cidrs'],
    reset: { secret_id_bound_cidrs: [] },
  },
  'bound-cidr-list': {
    read: (r) => ({ bound_cidr_list: r.secret_id_bound_cidrs }),
    names: ['bound_cidr_list'],
    reset: { secret_id_bound_cidrs: [] },
  },
  'token-bound-cidrs': {
    read: (r) => ({ token_bound_cidrs: r.token_bound_cidrs }),
    names: ['token_bound_cidrs'],
    reset: { token_bound_cidrs: [] },
  },
  period: {
    read: (r) => ({ period: r.token_period, token_period: r.token_period }),
    names: ['period', 'token_period'],
    reset: { token_period: 0 },
  },
};

async function mustRole(b: AppRoleEngine, name: string): Promise<RoleEntry> {
  const r = await b.role(roleName(name));
  if (!r) throw notFound();
  return r;
}

const secretIdFields = {
  role_name: f.name('Role name'),
  metadata: f.string('JSON object (as a string) of string values; becomes token metadata'),
  cidr_list: f.strings("CIDR blocks (subset of the role's) logins with this secret id may come from"),
  token_bound_cidrs: f.strings("CIDR blocks (subset of the role's) issued tokens may be used from"),
  num_uses: f.int("Uses of this secret id (at most the role's)"),
  ttl: f.duration("Lifetime of this secret id (at most the role's)"),
};

/** Routes of an AppRole mount. */
export const appRoleRoutes: AnyRoute[] = [
  route({
    path: 'login',
    summary: 'Log in with role_id and secret_id',
    fields: { role_id: f.string('Role id'), secret_id: f.string('Secret id').sensitive() },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data, remoteAddress }) => {
        const { auth, warnings } = await engine.login(data.role_id, data.secret_id, remoteAddress);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
  route({
    path: 'role',
    summary: 'List roles',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.listRoles() } }) },
  }),
  route({
    path: 'role/:role_name',
    summary: 'Create, read, update or delete a role',
    fields: roleFields,
    exists: async ({ engine, data }) => (await engine.role(roleName(data.role_name))) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const r = await engine.role(roleName(data.role_name));
        return r ? roleView(r) : undefined;
      },
      update: async ({ engine, data }) => {
        const warnings = await engine.writeRole(roleName(data.role_name), data);
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => {
        await engine.deleteRole(roleName(data.role_name));
      },
    },
  }),
  route({
    path: 'role/:role_name/role-id',
    summary: "Read or set a role's role_id",
    fields: { role_name: f.name('Role name'), role_id: f.string('New role id') },
    operations: {
      read: async ({ engine, data }) => ({ data: { role_id: (await mustRole(engine, data.role_name)).role_id } }),
      update: async ({ engine, data }) => {
        await engine.updateRoleId(roleName(data.role_name), data.role_id ?? '');
      },
    },
  }),
  route({
    path: 'role/:role_name/secret-id',
    summary: 'Generate a secret id, or list secret id accessors',
    fields: secretIdFields,
    operations: {
      update: async ({ engine, data }) => {
        const out = await engine.createSecretId(roleName(data.role_name), data);
        return { data: out, wrappedAccessor: String(out.secret_id_accessor) };
      },
      list: async ({ engine, data }) => ({ data: { keys: await engine.listSecretIds(roleName(data.role_name)) } }),
    },
  }),
  route({
    path: 'role/:role_name/custom-secret-id',
    summary: 'Register a caller-chosen secret id',
    fields: { ...secretIdFields, secret_id: f.string('The secret id').sensitive().required() },
    operations: {
      update: async ({ engine, data }) => {
        const out = await engine.createSecretId(roleName(data.role_name), data);
        return { data: out, wrappedAccessor: String(out.secret_id_accessor) };
      },
    },
  }),
  route({
    path: 'role/:role_name/secret-id/lookup',
    summary: 'Properties of a secret id',
    fields: { role_name: f.name('Role name'), secret_id: f.string('Secret id').sensitive().required() },
    operations: {
      update: async ({ engine, data }) => {
        const e = await engine.lookupSecretId(roleName(data.role_name), data.secret_id);
        // Vault: an unknown secret id gives no response on an update operation (204).
        return e ? { data: AppRoleEngine.view(e) } : undefined;
      },
    },
  }),
  route({
    path: 'role/:role_name/secret-id/destroy',
    summary: 'Destroy a secret id',
    fields: { role_name: f.name('Role name'), secret_id: f.string('Secret id').sensitive().required() },
    operations: {
      update: async ({ engine, data }) => engine.destroySecretId(roleName(data.role_name), data.secret_id),
      delete: async ({ engine, data }) => engine.destroySecretId(roleName(data.role_name), data.secret_id),
    },
  }),
  route({
    path: 'role/:role_name/secret-id-accessor/lookup',
    summary: 'Properties of a secret id, by accessor',
    fields: { role_name: f.name('Role name'), secret_id_accessor: f.string('Secret id accessor').required() },
    operations: {
      update: async ({ engine, data }) => {
        const e = await engine.lookupAccessor(roleName(data.role_name), data.secret_id_accessor);
        if (!e)
          throw new KeyholdError('notFound', '', {
            data: {
              error: `failed to find accessor entry for secret_id_accessor: ${JSON.stringify(data.secret_id_accessor)}`,
            },
          });
        return { data: AppRoleEngine.view(e) };
      },
    },
  }),
  route({
    path: 'role/:role_name/secret-id-accessor/destroy',
    summary: 'Destroy a secret id by accessor',
    fields: { role_name: f.name('Role name'), secret_id_accessor: f.string('Secret id accessor').required() },
    operations: {
      update: async ({ engine, data }) => engine.destroyAccessor(roleName(data.role_name), data.secret_id_accessor),
      delete: async ({ engine, data }) => engine.destroyAccessor(roleName(data.role_name), data.secret_id_accessor),
    },
  }),
  route({
    path: 'role/:role_name/local-secret-ids',
    summary: 'Whether the role keeps secret ids local',
    fields: { role_name: f.name('Role name') },
    operations: {
      read: async ({ engine, data }) => ({
        data: { local_secret_ids: (await mustRole(engine, data.role_name)).local_secret_ids },
      }),
    },
  }),
  route({
    path: 'role/:role_name/:field',
    summary: 'Read, set or reset one role field (policies, secret-id-ttl, token-ttl, period, ...)',
    fields: {
      role_name: f.name('Role name'),
      field: f.name('Field endpoint'),
      policies: f.strings('Policies'),
      token_policies: f.strings('Policies'),
      secret_id_num_uses: f.int('Uses of each secret id'),
      secret_id_ttl: f.duration('Lifetime of secret ids'),
      token_ttl: f.duration('Token TTL'),
      token_max_ttl: f.duration('Token max TTL'),
      token_num_uses: f.int('Token uses'),
      bind_secret_id: f.bool('Require a secret id'),
      secret_id_bound_cidrs: f.strings('Secret id CIDR blocks'),
      bound_cidr_list: f.strings('Deprecated secret id CIDR blocks'),
      token_bound_cidrs: f.strings('Token CIDR blocks'),
      period: f.duration('Token period'),
      token_period: f.duration('Token period'),
    },
    operations: {
      read: async ({ engine, data }) => {
        const spec = FIELD_ENDPOINTS[data.field];
        if (!spec) throw notFound('unsupported path');
        const r = await mustRole(engine, data.role_name);
        const out = { data: spec.read(r) } as { data: Record<string, unknown>; warnings?: string[] };
        if (data.field === 'bound-cidr-list')
          out.warnings = [
            'This field is deprecated and will be removed in a future release. Use secret_id_bound_cidrs instead.',
          ];
        return out;
      },
      update: async ({ engine, data }) => {
        const spec = FIELD_ENDPOINTS[data.field];
        if (!spec) throw notFound('unsupported path');
        const input: Record<string, unknown> = {};
        for (const n of spec.names)
          if ((data as Record<string, unknown>)[n] !== undefined) input[n] = (data as Record<string, unknown>)[n];
        if (Object.keys(input).length === 0) throw invalid(`missing ${spec.names[spec.names.length - 1]}`);
        const warnings = await engine.writeRole(roleName(data.role_name), input, { mustExist: true });
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => {
        const spec = FIELD_ENDPOINTS[data.field];
        if (!spec) throw notFound('unsupported path');
        await engine.writeRole(roleName(data.role_name), spec.reset, { mustExist: true });
      },
    },
  }),
  route({
    path: 'tidy/secret-id',
    summary: 'Remove expired secret ids',
    fields: {},
    operations: {
      update: async ({ engine }) => {
        await engine.tidy();
        return { data: null, warnings: [TIDY_WARNING], status: 202 };
      },
    },
  }),
];
