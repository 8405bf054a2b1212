/**
 * provider-b-kv: Azure Key Vault (reference sync-wire.md 1.5.3 and 3.2). OAuth2 client-credentials
 * token from `<authority>/<tenant>/oauth2/v2.0/token`, cached until shortly before it expires, then
 * the Secrets REST API under `key_vault_uri` with `api-version`.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import { baseUrl, checkUrlField, endpointField, tagsOf, type Connector, type ConnectorDeps, type DestinationTypeDef } from './common.js';
import type { DestinationRecord } from '../types.js';

/** Key Vault data-plane API version (stable, still served). */
export const AZURE_API_VERSION = '7.4';

/** `cloud` values: login authority and Key Vault resource of each Azure cloud. */
export const AZURE_CLOUDS: Record<string, { authority: string; resource: string }> = {
  cloud: { authority: 'https://login.microsoftonline.com', resource: 'https://vault.azure.net' },
  azurepublic: { authority: 'https://login.microsoftonline.com', resource: 'https://vault.azure.net' },
  azureusgovernment: { authority: 'https://login.microsoftonline.us', resource: 'https://vault.usgovcloudapi.net' },
  azurechina: { authority: 'https://login.chinacloudapi.cn', resource: 'https://vault.azure.cn' },
};

function azureDetail(b: Record<string, unknown> | null): string {
  const e = (b?.error ?? {}) as { code?: string; message?: string; innererror?: { code?: string } };
  return [e.code, e.innererror?.code, e.message].filter(Boolean).join(' ');
}

class AzureConnector implements Connector {
  private token: { value: string; expiresAt: number } | null = null;
  private readonly base: string;
  private readonly cloud: { authority: string; resource: string };
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    const c = dest.connection;
    this.cloud = AZURE_CLOUDS[String(c.cloud || 'cloud').toLowerCase()] ?? AZURE_CLOUDS.cloud!;
    this.base = baseUrl(c.endpoint_url || c.key_vault_uri, '');
  }

  private pendingToken: Promise<string> | null = null;

  /** A valid access token; concurrent callers share one token request. */
  private async bearer(signal: AbortSignal): Promise<string> {
    if (this.token && this.token.expiresAt > this.deps.now()) return this.token.value;
    this.pendingToken ??= this.fetchToken(signal).finally(() => (this.pendingToken = null));
    return this.pendingToken;
  }

  private async fetchToken(signal: AbortSignal): Promise<string> {
    const now = this.deps.now();
    const c = this.dest.connection;
    const authority = baseUrl(c.authority_host, this.cloud.authority);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: String(c.client_id),
      client_secret: String(c.client_secret ?? ''),
      scope: `${this.cloud.resource}/.default`,
    });
    const r = await this.deps.http.send(
      { method: 'POST', url: `${authority}/${encodeURIComponent(String(c.tenant_id))}/oauth2/v2.0/token`, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: form.toString(), what: 'token' },
      signal,
    );
    if (!ok(r)) throw failureOf(r, 'token', (b) => String(b?.error ?? '') + (b?.error_codes ? ` ${JSON.stringify(b.error_codes)}` : ''), now);
    const b = jsonOf(r);
    const value = typeof b?.access_token === 'string' ? b.access_token : '';
    if (!value) throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'token: reply has no access_token', { retryable: true });
    const ttl = Number(b?.expires_in ?? 3600);
    // Renew a minute early (or at half-life for short tokens) so a token never expires mid-request.
    this.token = { value, expiresAt: now + Math.max(0, Math.min(ttl - 60, ttl / 2)) * 1000 };
    return value;
  }

  private async call(method: string, path: string, body: unknown, what: string, signal: AbortSignal): Promise<HttpReply> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.bearer(signal);
      const r = await this.deps.http.send(
        {
          method,
          url: `${this.base}${path}?api-version=${AZURE_API_VERSION}`,
          headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
          what,
        },
        signal,
      );
      // A revoked or expired token: fetch a fresh one once.
      if (r.status === 401 && attempt === 0) {
        this.token = null;
        continue;
      }
      return r;
    }
  }

  async put(name: string, value: string, signal: AbortSignal): Promise<void> {
    const path = `/secrets/${encodeURIComponent(name)}`;
    const body = { value, tags: tagsOf(this.dest), contentType: 'text/plain' };
    let r = await this.call('PUT', path, body, 'set secret', signal);
    if (r.status === 409 && /ObjectIsDeletedButRecoverable/i.test(r.text)) {
      // The name is held by a soft-deleted secret (ours, after an unsync): recover it, then set.
      const rec = await this.call('POST', `/deletedsecrets/${encodeURIComponent(name)}/recover`, undefined, 'recover secret', signal);
      if (!ok(rec) && rec.status !== 409) throw failureOf(rec, 'recover secret', azureDetail, this.deps.now());
      r = await this.call('PUT', path, body, 'set secret', signal);
      if (r.status === 409) {
        // Recovery finishes in the background; the retry comes with backoff.
        throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'set secret: HTTP 409 recovery of the soft-deleted secret still in progress', { retryable: true, httpStatus: 409 });
      }
    }
    if (!ok(r)) throw failureOf(r, 'set secret', azureDetail, this.deps.now());
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    const r = await this.call('DELETE', `/secrets/${encodeURIComponent(name)}`, undefined, 'delete secret', signal);
    if (r.status === 404 || ok(r)) return;
    throw failureOf(r, 'delete secret', azureDetail, this.deps.now());
  }

  close(): void {
    this.token = null;
  }
}

/** The provider-b-kv destination type. */
export const providerBKv: DestinationTypeDef = {
  type: 'provider-b-kv',
  provider: 'Azure Key Vault',
  fields: {
    key_vault_uri: f.string('URI of an existing Key Vault, e.g. https://my-vault.vault.azure.net'),
    client_id: f.string('Application (client) id of the app registration'),
    client_secret: f.string('Client secret of the app registration').sensitive(),
    tenant_id: f.string('Directory (tenant) id'),
    cloud: f.string(`Azure cloud: ${Object.keys(AZURE_CLOUDS).join(', ')} (default "cloud", the public cloud)`),
    authority_host: f.string('Replaces the login authority base URL (default per cloud, e.g. https://login.microsoftonline.com)'),
    endpoint_url: endpointField,
  },
  required: ['key_vault_uri', 'client_id', 'client_secret', 'tenant_id'],
  immutable: ['key_vault_uri', 'tenant_id', 'cloud'],
  defaults: { cloud: 'cloud', authority_host: '', endpoint_url: '' },
  defaultGranularity: 'secret-path',
  defaultTemplates: {
    'secret-path': 'vault-{{ .MountAccessor }}-{{ .SecretPath }}',
    'secret-key': 'vault-{{ .MountAccessor }}-{{ .SecretPath }}-{{ .SecretKey }}',
  },
  customTags: true,
  check(conn) {
    checkUrlField(conn, 'key_vault_uri');
    checkUrlField(conn, 'authority_host');
    checkUrlField(conn, 'endpoint_url');
    if (!AZURE_CLOUDS[String(conn.cloud || 'cloud').toLowerCase()]) throw invalid('cloud', `must be one of ${Object.keys(AZURE_CLOUDS).join(', ')}`);
    if (!/^[\w.-]{1,128}$/.test(String(conn.tenant_id))) throw invalid('tenant_id', 'must be a tenant id or domain');
  },
  connect: (dest, deps) => new AzureConnector(dest, deps),
};
