/** github auth routes (Vault's builtin/credential/github API): config, map/teams, map/users, login. */
import { f } from '../../framework/fields.js';
import { type AnyRoute, routesFor } from '../../framework/route.js';
import { tokenFields, tokenParamsView } from '../auth-common/token-params.js';
import { DEFAULT_BASE_URL } from './github-api.js';
import type { GithubEngine, MapKind } from './github-engine.js';

const route = routesFor<GithubEngine>();

/** The read and write routes of one policy map (framework.PolicyMap: key -> comma list of policies). */
function mapRoutes(kind: MapKind, what: string): AnyRoute[] {
  return [
    route({
      path: `map/${kind}`,
      summary: `List mapped ${what}`,
      fields: {},
      operations: { list: async ({ engine }) => ({ data: { keys: await engine.listMap(kind) } }) },
    }),
    route({
      path: `map/${kind}/:key`,
      summary: `Policies of a GitHub ${what.replace(/s$/, '')}`,
      fields: { key: f.name(`GitHub ${what.replace(/s$/, '')} name`), value: f.string('Comma-separated policies') },
      operations: {
        // Vault answers a read of an unmapped key with no data (hvac reads `data` either way).
        read: async ({ engine, data }) => {
          const e = await engine.mapEntry(kind, data.key);
          return { data: e ? { key: e.key, value: e.value } : null };
        },
        update: async ({ engine, data }) => engine.writeMap(kind, data.key, (data.value ?? '').trim()),
        delete: async ({ engine, data }) => engine.deleteMap(kind, data.key),
      },
    }),
  ];
}

/** Routes of a github mount. */
export const githubRoutes: AnyRoute[] = [
  route({
    path: 'login',
    summary: 'Log in with a GitHub personal access token',
    fields: { token: f.string('GitHub personal access token').sensitive() },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data }) => {
        const { auth, warnings } = await engine.login(data.token);
        return { auth, data: null, ...(warnings.length ? { warnings } : {}) };
      },
    },
  }),
  route({
    path: 'config',
    summary: 'Organization, organization id, API base URL and token settings',
    fields: {
      organization: f.string('GitHub organization users must belong to'),
      organization_id: f.int('Its numeric id (learnt at the first login when unset)'),
      base_url: f.string(`API base URL (default ${DEFAULT_BASE_URL}; GitHub Enterprise: https://host/api/v3/)`),
      ...tokenFields,
    },
    operations: {
      read: async ({ engine }) => {
        const c = await engine.config();
        if (!c) return undefined;
        return {
          data: {
            organization: c.organization,
            organization_id: c.organization_id,
            base_url: c.base_url,
            ttl: c.legacy_ttl ?? c.token_ttl,
            max_ttl: c.legacy_max_ttl ?? c.token_max_ttl,
            ...tokenParamsView(c),
          },
        };
      },
      update: async ({ engine, data }) => {
        const warnings = await engine.writeConfig(data);
        return warnings.length ? { data: null, warnings } : undefined;
      },
    },
  }),
  ...mapRoutes('teams', 'teams'),
  ...mapRoutes('users', 'users'),
];
