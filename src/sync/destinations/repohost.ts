/**
 * repohost: GitHub Actions secrets (reference sync-wire.md 1.5.5 and 3.4). Fetch the repository,
 * environment or organization public key, seal the value with libsodium's sealed box (X25519 +
 * XSalsa20-Poly1305, which node:crypto lacks), PUT it with the key id (organization secrets with
 * their visibility); DELETE to unsync (404 is success). Authenticates with a personal access token
 * or as a GitHub App installation (JWT signed here, installation token cached until near expiry).
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import {
  baseUrl,
  checkUrlField,
  endpointField,
  type Connector,
  type ConnectorDeps,
  type DestinationTypeDef,
} from './common.js';
import type { DestinationRecord } from '../types.js';
import { signJwtRs256 } from '../jwt.js';

/** GitHub REST API version header value. */
export const GITHUB_API_VERSION = '2022-11-28';

type Sodium = typeof import('libsodium-wrappers');
let sodiumReady: Promise<Sodium> | null = null;

/** libsodium, loaded on first use. */
export function loadSodium(): Promise<Sodium> {
  sodiumReady ??= (async () => {
    const mod = (await import('libsodium-wrappers')) as unknown as { default?: Sodium } & Sodium;
    const sodium = mod.default ?? mod;
    await sodium.ready;
    return sodium;
  })();
  return sodiumReady;
}

/** Seal `value` to a base64 X25519 public key; returns standard base64 (GitHub's `encrypted_value`). */
export async function sealForGithub(value: string, publicKeyB64: string): Promise<string> {
  const sodium = await loadSodium();
  const pk = Buffer.from(publicKeyB64, 'base64');
  if (pk.length !== 32)
    throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'public key: not a 32-byte X25519 key', { retryable: true });
  const sealed = sodium.crypto_box_seal(Buffer.from(value, 'utf8'), pk);
  return Buffer.from(sealed).toString('base64');
}

function githubDetail(b: Record<string, unknown> | null): string {
  return typeof b?.message === 'string' ? b.message : '';
}

/** Where the secrets go. */
export const SECRETS_LOCATIONS = ['repository', 'organization'] as const;
/** Which repositories of the organization may use an organization secret (GitHub REST `visibility`). */
export const ORG_VISIBILITIES = ['all', 'private', 'selected'] as const;

/** An installation token is renewed this long before GitHub's `expires_at` (tokens live one hour). */
const INSTALLATION_TOKEN_MARGIN_MS = 5 * 60_000;

/**
 * The JWT a GitHub App authenticates with (docs.github.com "Generating a JSON Web Token (JWT) for a
 * GitHub App"): RS256, `iat` 60 s in the past against clock drift, `exp` at most 10 minutes after
 * `iat`, `iss` the app id.
 */
export function githubAppJwt(appId: number, privateKeyPem: string, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  return signJwtRs256({ iat: now - 60, exp: now + 540, iss: String(appId) }, privateKeyPem);
}

class GithubConnector implements Connector {
  private key: { key_id: string; key: string } | null = null;
  private readonly base: string;
  private readonly scope: string;
  private readonly org: boolean;
  /** Cached installation token (GitHub App auth) and when to renew it. */
  private installation: { token: string; renewAt: number } | null = null;
  /** `selected_repository_ids` plus the ids of `selected_repository_names`, once resolved (both fixed). */
  private selectedIds: Promise<number[]> | null = null;
  private pendingToken: Promise<string> | null = null;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    const c = dest.connection;
    this.base = baseUrl(c.endpoint_url, 'https://api.github.com');
    this.org = c.secrets_location === 'organization';
    if (this.org) this.scope = `/orgs/${encodeURIComponent(String(c.organization_name))}/actions/secrets`;
    else {
      const repo = `/repos/${encodeURIComponent(String(c.repository_owner))}/${encodeURIComponent(String(c.repository_name))}`;
      this.scope = c.environment_name
        ? `${repo}/environments/${encodeURIComponent(String(c.environment_name))}/secrets`
        : `${repo}/actions/secrets`;
    }
  }

  private get appAuth(): boolean {
    return Boolean(this.dest.connection.app_name);
  }

  /** The bearer token: the personal access token, or an installation token of the GitHub App (cached until near expiry). */
  private async bearer(signal: AbortSignal): Promise<string> {
    if (!this.appAuth) return String(this.dest.connection.access_token ?? '');
    if (this.installation && this.installation.renewAt > this.deps.now()) return this.installation.token;
    this.pendingToken ??= this.fetchInstallationToken(signal).finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  /** `POST /app/installations/{id}/access_tokens` with the app's JWT (docs.github.com REST "Apps"). */
  private async fetchInstallationToken(signal: AbortSignal): Promise<string> {
    const c = this.dest.connection;
    const app = await this.deps.githubApp?.(String(c.app_name));
    if (!app)
      throw new SyncFailure(
        'CLIENT_SIDE_ERROR',
        `installation token: GitHub App "${String(c.app_name).slice(0, 64)}" is not registered under sys/sync/github-apps`,
      );
    const now = this.deps.now();
    const r = await this.deps.http.send(
      {
        method: 'POST',
        url: `${this.base}/app/installations/${encodeURIComponent(String(c.installation_id))}/access_tokens`,
        headers: {
          Authorization: `Bearer ${githubAppJwt(app.app_id, app.private_key, now)}`,
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': GITHUB_API_VERSION,
        },
        what: 'installation token',
      },
      signal,
    );
    if (!ok(r)) throw failureOf(r, 'installation token', githubDetail, now);
    const b = jsonOf(r);
    if (typeof b?.token !== 'string' || b.token === '')
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'installation token: reply has no token', { retryable: true });
    const expires = typeof b.expires_at === 'string' ? Date.parse(b.expires_at) : NaN;
    const until = Number.isFinite(expires) ? expires : now + 3_600_000;
    // Renew five minutes early, or at half-life for a token that lives less than ten.
    this.installation = {
      token: b.token,
      renewAt: now + Math.max(0, Math.min(until - now - INSTALLATION_TOKEN_MARGIN_MS, (until - now) / 2)),
    };
    return b.token;
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    what: string,
    signal: AbortSignal,
  ): Promise<HttpReply> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.deps.http.send(
        {
          method,
          url: this.base + path,
          headers: {
            Authorization: `Bearer ${await this.bearer(signal)}`,
            Accept: 'application/vnd.github+json',
            'X-GitHub-Api-Version': GITHUB_API_VERSION,
            ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          what,
        },
        signal,
      );
      // An installation token revoked or expired early: fetch a fresh one once.
      if (r.status === 401 && this.appAuth && attempt === 0) {
        this.installation = null;
        continue;
      }
      return r;
    }
  }

  private async publicKey(signal: AbortSignal, refresh: boolean): Promise<{ key_id: string; key: string }> {
    if (this.key && !refresh) return this.key;
    const r = await this.send('GET', `${this.scope}/public-key`, undefined, 'public key', signal);
    if (!ok(r)) throw failureOf(r, 'public key', githubDetail, this.deps.now());
    const b = jsonOf(r);
    if (typeof b?.key_id !== 'string' || typeof b?.key !== 'string')
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'public key: malformed reply', { retryable: true });
    this.key = { key_id: b.key_id, key: b.key };
    return this.key;
  }

  async put(name: string, value: string, signal: AbortSignal): Promise<void> {
    const c = this.dest.connection;
    for (let attempt = 0; ; attempt++) {
      const key = await this.publicKey(signal, attempt > 0);
      const encrypted_value = await sealForGithub(value, key.key);
      const body: Record<string, unknown> = { encrypted_value, key_id: key.key_id };
      if (this.org) {
        body.visibility = c.organization_visibility;
        if (c.organization_visibility === 'selected') body.selected_repository_ids = await this.repositoryIds(signal);
      }
      const r = await this.send('PUT', `${this.scope}/${encodeURIComponent(name)}`, body, 'put secret', signal);
      // 422 when the key rotated since we fetched it: fetch it again once.
      if (r.status === 422 && attempt === 0) continue;
      if (!ok(r)) throw failureOf(r, 'put secret', githubDetail, this.deps.now());
      return;
    }
  }

  /**
   * The repository ids an organization secret with visibility `selected` is shared with: the given
   * ids and, for `selected_repository_names`, the ids GitHub reports for those repositories of the
   * organization (`GET /repos/{org}/{repo}`, with the same token; GitHub's secrets API takes ids
   * only). Resolved once per connector (the fields are fixed; the connector is rebuilt when the
   * destination changes); a failed lookup is tried again on the next sync.
   */
  private repositoryIds(signal: AbortSignal): Promise<number[]> {
    const c = this.dest.connection;
    const ids = (c.selected_repository_ids as number[] | undefined) ?? [];
    const names = (c.selected_repository_names as string[] | undefined) ?? [];
    if (names.length === 0) return Promise.resolve(ids);
    this.selectedIds ??= (async () => {
      const out = new Set(ids);
      for (const repo of names) out.add(await this.repositoryId(String(c.organization_name), repo, signal));
      return [...out];
    })().catch((e: unknown) => {
      this.selectedIds = null;
      throw e;
    });
    return this.selectedIds;
  }

  private async repositoryId(org: string, repo: string, signal: AbortSignal): Promise<number> {
    const what = `repository ${org}/${repo}`;
    const r = await this.send(
      'GET',
      `/repos/${encodeURIComponent(org)}/${encodeURIComponent(repo)}`,
      undefined,
      what,
      signal,
    );
    // 404 also when the token may not see it (GitHub hides private repositories that way).
    if (r.status === 404)
      throw new SyncFailure(
        'CLIENT_SIDE_ERROR',
        `selected_repository_names: ${what} not found, or not visible to the token`,
        { httpStatus: 404 },
      );
    if (!ok(r)) throw failureOf(r, what, githubDetail, this.deps.now());
    const id = jsonOf(r)?.id;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0)
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', `${what}: reply has no repository id`, { retryable: true });
    return id;
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const r = await this.send(
      'DELETE',
      `${this.scope}/${encodeURIComponent(name)}`,
      undefined,
      'delete secret',
      signal,
    );
    if (r.status === 404 || ok(r)) return;
    throw failureOf(r, 'delete secret', githubDetail, this.deps.now());
  }

  close(): void {
    this.key = null;
    this.installation = null;
    this.selectedIds = null;
  }
}

const SEGMENT = /^[A-Za-z0-9_.-]{1,100}$/;

/** The repohost destination type. */
export const repohost: DestinationTypeDef = {
  type: 'repohost',
  provider: 'GitHub Actions secrets',
  fields: {
    access_token: f
      .string('Fine-grained or classic personal access token with Secrets write (or use app_name + installation_id)')
      .sensitive(),
    app_name: f.string('GitHub App registered under sys/sync/github-apps to authenticate as (with installation_id)'),
    installation_id: f.string("Installation id of the GitHub App on the repository's or organization's account"),
    secrets_location: f
      .string('repository (default): repository or environment secrets; organization: organization secrets')
      .oneOf(...SECRETS_LOCATIONS),
    repository_owner: f.string('Organization or user owning the repository (secrets_location repository)'),
    repository_name: f.string('Repository name (secrets_location repository)'),
    environment_name: f.string('Optional deployment environment of the repository to hold the secrets'),
    organization_name: f.string('Organization holding the secrets (secrets_location organization)'),
    organization_visibility: f
      .string('Repositories that may use the organization secrets: all, private or selected')
      .oneOf(...ORG_VISIBILITIES),
    selected_repository_ids: f.ints('Repository ids that may use the secrets (organization_visibility selected)'),
    selected_repository_names: f.strings(
      'Names of repositories of the organization that may use the secrets (organization_visibility selected; resolved to ids through the GitHub API)',
    ),
    endpoint_url: endpointField,
  },
  required: [],
  immutable: [
    'repository_owner',
    'repository_name',
    'secrets_location',
    'organization_name',
    'organization_visibility',
    'selected_repository_ids',
    'selected_repository_names',
  ],
  defaults: {
    environment_name: '',
    endpoint_url: '',
    secrets_location: 'repository',
    app_name: '',
    installation_id: '',
    organization_name: '',
    organization_visibility: '',
    selected_repository_ids: [],
    selected_repository_names: [],
  },
  defaultGranularity: 'secret-key',
  defaultTemplates: {
    'secret-path': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}',
    'secret-key': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}_{{ .SecretKey | uppercase }}',
  },
  customTags: false,
  check(conn) {
    conn.secrets_location ||= 'repository';
    if (conn.app_name || conn.installation_id) {
      if (!conn.app_name) throw invalid('app_name', 'is required with installation_id (GitHub App authentication)');
      if (!/^[1-9]\d{0,19}$/.test(String(conn.installation_id ?? '')))
        throw invalid('installation_id', 'is required with app_name and must be the numeric installation id');
      if (!/^[A-Za-z0-9_.-]{1,128}$/.test(String(conn.app_name)))
        throw invalid('app_name', 'must name a GitHub App registered under sys/sync/github-apps');
    } else if (!conn.access_token)
      throw invalid('access_token', 'is required (or app_name and installation_id for GitHub App authentication)');
    if (conn.secrets_location === 'organization') {
      if (!SEGMENT.test(String(conn.organization_name ?? '')))
        throw invalid(
          'organization_name',
          'is required with secrets_location organization and must be a GitHub organization name',
        );
      if (conn.environment_name) throw invalid('environment_name', 'applies to repository secrets only');
      if (!(ORG_VISIBILITIES as readonly string[]).includes(String(conn.organization_visibility)))
        throw invalid(
          'organization_visibility',
          `is required with secrets_location organization: ${ORG_VISIBILITIES.join(', ')}`,
        );
      const ids = (conn.selected_repository_ids as number[] | undefined) ?? [];
      const names = ((conn.selected_repository_names as string[] | undefined) ?? [])
        .map((n) => n.trim())
        .filter((n) => n !== '');
      if (conn.organization_visibility === 'selected') {
        if (ids.length === 0 && names.length === 0)
          throw invalid(
            'selected_repository_ids',
            'is required with organization_visibility selected (or selected_repository_names)',
          );
        if (ids.some((n) => !Number.isSafeInteger(n) || n <= 0))
          throw invalid('selected_repository_ids', 'must be positive repository ids');
        const bad = names.find((n) => !SEGMENT.test(n) || n === '.' || n === '..');
        if (bad !== undefined)
          throw invalid(
            'selected_repository_names',
            `"${bad.slice(0, 100)}" is not a repository name of the organization ([A-Za-z0-9_.-], without the owner)`,
          );
      } else if (ids.length > 0)
        throw invalid('selected_repository_ids', 'applies only with organization_visibility selected');
      else if (names.length > 0)
        throw invalid('selected_repository_names', 'applies only with organization_visibility selected');
      conn.selected_repository_ids = [...new Set(ids)];
      conn.selected_repository_names = [...new Set(names)];
    } else {
      for (const k of ['repository_owner', 'repository_name']) {
        if (!conn[k]) throw invalid(k, 'is required');
        if (!SEGMENT.test(String(conn[k]))) throw invalid(k, 'must be a GitHub owner/repository name ([A-Za-z0-9_.-])');
      }
      if (
        conn.organization_name ||
        conn.organization_visibility ||
        ((conn.selected_repository_ids as number[] | undefined) ?? []).length ||
        ((conn.selected_repository_names as string[] | undefined) ?? []).length
      ) {
        throw invalid(
          'secrets_location',
          'organization_* and selected_repository_* fields need secrets_location organization',
        );
      }
      if (conn.environment_name && !/^[^/\\?#]{1,255}$/.test(String(conn.environment_name)))
        throw invalid('environment_name', 'must be an environment name');
    }
    checkUrlField(conn, 'endpoint_url');
  },
  connect: (dest, deps) => new GithubConnector(dest, deps),
};
