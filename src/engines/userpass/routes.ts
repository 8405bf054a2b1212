/** userpass routes (Vault's builtin/credential/userpass API): users, password, policies, list, login. */
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { tokenFields, tokenParamsView } from '../auth-common/token-params.js';
import { type UserpassEngine, userName, type UserEntry } from './userpass-engine.js';

const route = routesFor<UserpassEngine>();

/** The user read view (pathUserRead): token fields, plus the deprecated names when they were used. */
function userView(u: UserEntry): Record<string, unknown> {
  const data: Record<string, unknown> = tokenParamsView(u);
  if (u.legacy_policies?.length) data.policies = u.token_policies;
  if (u.legacy_bound_cidrs?.length) data.bound_cidrs = u.token_bound_cidrs;
  if (u.legacy_ttl) data.ttl = u.token_ttl;
  if (u.legacy_max_ttl) data.max_ttl = u.token_max_ttl;
  return data;
}

/** Routes of a userpass mount. */
export const userpassRoutes: AnyRoute[] = [
  route({
    path: 'login/:username',
    summary: 'Log in with a username and password',
    fields: { username: f.name('Username'), password: f.string('Password').sensitive() },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data, remoteAddress }) => {
        const { auth, warnings } = await engine.login(data.username, data.password, remoteAddress);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
  route({
    path: 'users',
    summary: 'List users',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: { keys: await engine.list() } }) },
  }),
  route({
    path: 'users/:username',
    summary: 'Create, read, update or delete a user',
    fields: {
      username: f.name('Username (case-insensitive)'),
      password: f.string('Password (required for a new user)').sensitive(),
      password_hash: f.string('A bcrypt hash to store instead of a password').sensitive(),
      ...tokenFields,
    },
    exists: async ({ engine, data }) => (await engine.user(userName(data.username))) !== null,
    operations: {
      read: async ({ engine, data }) => {
        const u = await engine.user(userName(data.username));
        return u ? { data: userView(u) } : undefined;
      },
      update: async ({ engine, data }) => {
        const warnings = await engine.write(userName(data.username), data);
        return warnings.length ? { data: null, warnings } : undefined;
      },
      delete: async ({ engine, data }) => {
        await engine.delete(userName(data.username));
      },
    },
  }),
  route({
    path: 'users/:username/password',
    summary: "Change a user's password",
    fields: {
      username: f.name('Username'),
      password: f.string('New password').sensitive(),
      password_hash: f.string('A bcrypt hash to store instead').sensitive(),
    },
    operations: {
      update: async ({ engine, data }) => {
        await engine.setPassword(userName(data.username), data.password, data.password_hash);
      },
    },
  }),
  route({
    path: 'users/:username/policies',
    summary: "Change a user's policies",
    fields: {
      username: f.name('Username'),
      policies: f.strings('Policies (deprecated name)'),
      token_policies: f.strings('Policies'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const input =
          data.token_policies !== undefined
            ? { token_policies: data.token_policies }
            : { policies: data.policies ?? [] };
        const warnings = await engine.write(userName(data.username), input, { mustExist: true });
        return warnings.length ? { data: null, warnings } : undefined;
      },
    },
  }),
];
