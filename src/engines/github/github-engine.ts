/**
 * GitHub login (hashicorp/vault builtin/credential/github: path_config.go, path_login.go, and the
 * team/user policy maps): a personal access token is checked against the GitHub API at `base_url`;
 * the user must belong to the configured organization (by organization_id when known, else by
 * name; the id is learnt at the first login, trust on first use as Vault does); policies come from
 * the config's token_policies, the teams map (team name and slug) and the users map. A user
 * outside the organization is refused with 400 (Vault answers the same text). No HTTP routes here.
 */
import type { EngineEnv, IssuedLogin } from '../../framework/context.js';
import { invalid } from '../../framework/errors.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { defaultTokenParams, loginAuthOf, parseTokenParams, type TokenParams } from '../auth-common/token-params.js';
import { GithubApi, type GithubOrg } from './github-api.js';

/** The mount's config. */
export interface GithubConfig extends TokenParams {
  organization: string;
  organization_id: number;
  base_url: string;
  legacy_ttl?: number;
  legacy_max_ttl?: number;
}

/** A policy map entry (map/teams/:key, map/users/:key). */
export interface MapEntry {
  key: string;
  value: string;
}

/** Map kinds and their storage prefix. */
export type MapKind = 'teams' | 'users';

/** Vault's answer for a user outside the organization. */
export const NOT_IN_ORG = 'user is not part of required org';

/** One github mount. */
export class GithubEngine {
  constructor(readonly env: EngineEnv) {}

  /** Nothing to stop (EngineLifecycle). */
  async close(): Promise<void> {}

  config(): Promise<GithubConfig | null> {
    return getJSON<GithubConfig>(this.env.storage, 'config');
  }

  /** Write the config (pathConfigWrite); returns warnings of the token fields. */
  async writeConfig(input: Record<string, unknown>): Promise<string[]> {
    const c: GithubConfig = (await this.config()) ?? {
      organization: '',
      organization_id: 0,
      base_url: '',
      ...defaultTokenParams(),
    };
    if (typeof input.organization === 'string') c.organization = input.organization.trim();
    if (!c.organization) throw invalid('organization is a required parameter');
    if (input.organization_id !== undefined) {
      const id = Number(input.organization_id);
      if (!Number.isInteger(id) || id < 0) throw invalid('organization_id', 'must be a non-negative integer');
      c.organization_id = id;
    } else if (typeof input.organization === 'string') c.organization_id = 0; // a new organization is learnt again
    if (typeof input.base_url === 'string') {
      const b = input.base_url.trim();
      if (b !== '' && b !== '/') {
        let u: URL;
        try {
          u = new URL(b);
        } catch {
          throw invalid('base_url', 'must be an absolute http(s) URL');
        }
        if (u.protocol !== 'http:' && u.protocol !== 'https:')
          throw invalid('base_url', 'must be an absolute http(s) URL');
      }
      c.base_url = b;
    }
    const warnings = parseTokenParams(c, input, this.env.mount);
    if (input.ttl !== undefined && input.token_ttl === undefined) c.legacy_ttl = c.token_ttl;
    if (input.max_ttl !== undefined && input.token_max_ttl === undefined) c.legacy_max_ttl = c.token_max_ttl;
    await putJSON(this.env.storage, 'config', c);
    return warnings;
  }

  private mapKey(kind: MapKind, key: string): string {
    return `map/${kind}/${key.toLowerCase()}`;
  }

  /** A map entry, or null. */
  mapEntry(kind: MapKind, key: string): Promise<MapEntry | null> {
    return getJSON<MapEntry>(this.env.storage, this.mapKey(kind, key));
  }

  async writeMap(kind: MapKind, key: string, value: string): Promise<void> {
    await putJSON(this.env.storage, this.mapKey(kind, key), { key: key.toLowerCase(), value } satisfies MapEntry);
  }

  async deleteMap(kind: MapKind, key: string): Promise<void> {
    await this.env.storage.delete(this.mapKey(kind, key));
  }

  async listMap(kind: MapKind): Promise<string[]> {
    return (await this.env.storage.list(`map/${kind}/`)).sort();
  }

  private async policiesOf(kind: MapKind, keys: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const k of keys) {
      const e = await this.mapEntry(kind, k);
      if (e)
        out.push(
          ...e.value
            .split(',')
            .map((p) => p.trim().toLowerCase())
            .filter(Boolean),
        );
    }
    return out;
  }

  /** Log in with a personal access token (path_login.go). */
  async login(token: string | undefined): Promise<IssuedLogin> {
    if (!token) throw invalid('token', 'missing token');
    const config = await this.config();
    if (!config?.organization) throw invalid('configuration has not been set');
    const api = new GithubApi(config.base_url, token);
    const user = await api.user();
    if (config.organization_id === 0) {
      // Trust on first use, as Vault: the organization's id is learnt once and kept.
      const id = await api.orgId(config.organization);
      if (id > 0) {
        config.organization_id = id;
        await putJSON(this.env.storage, 'config', config);
      }
    }
    const orgs = await api.orgs();
    const org: GithubOrg | undefined =
      config.organization_id > 0
        ? orgs.find((o) => o.id === config.organization_id)
        : orgs.find((o) => typeof o.login === 'string' && o.login.toLowerCase() === config.organization.toLowerCase());
    if (!org) throw invalid(NOT_IN_ORG);
    const teamNames: string[] = [];
    for (const t of await api.teams()) {
      if (t.organization?.id !== org.id) continue;
      if (typeof t.name === 'string') teamNames.push(t.name);
      if (typeof t.slug === 'string' && t.slug !== t.name) teamNames.push(t.slug);
    }
    const mapped = [...(await this.policiesOf('teams', teamNames)), ...(await this.policiesOf('users', [user.login]))];
    const metadata = { username: user.login, org: org.login };
    const auth = loginAuthOf(config, {
      path: `${this.env.mount.path}login`,
      displayName: user.login,
      metadata,
      alias: { name: user.login },
      groupAliases: teamNames,
    });
    auth.policies = [...config.token_policies, ...mapped];
    const issue = this.env.core.issueLoginToken;
    if (!issue) throw new Error('token store unavailable');
    return issue.call(this.env.core, this.env.mount, auth);
  }
}
