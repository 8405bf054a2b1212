/**
 * repohost: GitHub Actions secrets (reference sync-wire.md 1.5.5 and 3.4). Fetch the repository (or
 * environment) public key, seal the value with libsodium's sealed box (X25519 + XSalsa20-Poly1305,
 * which node:crypto lacks), PUT it with the key id; DELETE to unsync (404 is success).
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import { baseUrl, checkUrlField, endpointField, type Connector, type ConnectorDeps, type DestinationTypeDef } from './common.js';
import type { DestinationRecord } from '../types.js';

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
  if (pk.length !== 32) throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'public key: not a 32-byte X25519 key', { retryable: true });
  const sealed = sodium.crypto_box_seal(Buffer.from(value, 'utf8'), pk);
  return Buffer.from(sealed).toString('base64');
}

function githubDetail(b: Record<string, unknown> | null): string {
  return typeof b?.message === 'string' ? b.message : '';
}

class GithubConnector implements Connector {
  private key: { key_id: string; key: string } | null = null;
  private readonly base: string;
  private readonly scope: string;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    const c = dest.connection;
    this.base = baseUrl(c.endpoint_url, 'https://api.github.com');
    const repo = `/repos/${encodeURIComponent(String(c.repository_owner))}/${encodeURIComponent(String(c.repository_name))}`;
    this.scope = c.environment_name ? `${repo}/environments/${encodeURIComponent(String(c.environment_name))}/secrets` : `${repo}/actions/secrets`;
  }

  private send(method: string, path: string, body: unknown, what: string, signal: AbortSignal): Promise<HttpReply> {
    return this.deps.http.send(
      {
        method,
        url: this.base + path,
        headers: {
          Authorization: `Bearer ${String(this.dest.connection.access_token)}`,
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': GITHUB_API_VERSION,
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        what,
      },
      signal,
    );
  }

  private async publicKey(signal: AbortSignal, refresh: boolean): Promise<{ key_id: string; key: string }> {
    if (this.key && !refresh) return this.key;
    const r = await this.send('GET', `${this.scope}/public-key`, undefined, 'public key', signal);
    if (!ok(r)) throw failureOf(r, 'public key', githubDetail, this.deps.now());
    const b = jsonOf(r);
    if (typeof b?.key_id !== 'string' || typeof b?.key !== 'string') throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'public key: malformed reply', { retryable: true });
    this.key = { key_id: b.key_id, key: b.key };
    return this.key;
  }

  async put(name: string, value: string, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const key = await this.publicKey(signal, attempt > 0);
      const encrypted_value = await sealForGithub(value, key.key);
      const r = await this.send('PUT', `${this.scope}/${encodeURIComponent(name)}`, { encrypted_value, key_id: key.key_id }, 'put secret', signal);
      // 422 when the repository key rotated since we fetched it: fetch it again once.
      if (r.status === 422 && attempt === 0) continue;
      if (!ok(r)) throw failureOf(r, 'put secret', githubDetail, this.deps.now());
      return;
    }
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const r = await this.send('DELETE', `${this.scope}/${encodeURIComponent(name)}`, undefined, 'delete secret', signal);
    if (r.status === 404 || ok(r)) return;
    throw failureOf(r, 'delete secret', githubDetail, this.deps.now());
  }

  close(): void {
    this.key = null;
  }
}

const SEGMENT = /^[A-Za-z0-9_.-]{1,100}$/;

/** The repohost destination type. */
export const repohost: DestinationTypeDef = {
  type: 'repohost',
  provider: 'GitHub Actions secrets',
  fields: {
    access_token: f.string('Fine-grained or classic personal access token with Secrets write').sensitive(),
    repository_owner: f.string('Organization or user owning the repository'),
    repository_name: f.string('Repository name'),
    environment_name: f.string('Optional deployment environment of the repository to hold the secrets'),
    endpoint_url: endpointField,
  },
  required: ['access_token', 'repository_owner', 'repository_name'],
  immutable: ['repository_owner', 'repository_name'],
  defaults: { environment_name: '', endpoint_url: '' },
  defaultGranularity: 'secret-key',
  defaultTemplates: {
    'secret-path': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}',
    'secret-key': 'VAULT_{{ .MountAccessor | uppercase }}_{{ .SecretPath | uppercase }}_{{ .SecretKey | uppercase }}',
  },
  customTags: false,
  check(conn) {
    for (const k of ['repository_owner', 'repository_name']) if (!SEGMENT.test(String(conn[k]))) throw invalid(k, 'must be a GitHub owner/repository name ([A-Za-z0-9_.-])');
    if (conn.environment_name && !/^[^/\\?#]{1,255}$/.test(String(conn.environment_name))) throw invalid('environment_name', 'must be an environment name');
    checkUrlField(conn, 'endpoint_url');
  },
  connect: (dest, deps) => new GithubConnector(dest, deps),
};
