/**
 * provider-c-sm: Google Cloud Secret Manager (reference sync-wire.md 1.5.4 and 3.3). A service-account
 * JWT (RS256, `aud` = token_uri) is exchanged at the credentials' `token_uri` for an access token
 * (cached until shortly before expiry); then the v1 REST API: create secret, add version, delete.
 */
import { createPrivateKey } from 'node:crypto';
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import { crc32c } from '../crc32c.js';
import { signJwtRs256 } from '../jwt.js';
import { baseUrl, checkUrlField, endpointField, tagsOf, type Connector, type ConnectorDeps, type DestinationTypeDef } from './common.js';
import type { DestinationRecord } from '../types.js';

/** Google's token endpoint when the credentials do not name one. */
const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** The parts of a service-account key file the connector uses. */
export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

/** Parse a service-account JSON; throws 400 naming `credentials` (never echoing its content). */
export function parseServiceAccount(text: string): ServiceAccount {
  const bad = (why: string) => invalid('credentials', `failed to parse credentials: ${why}`);
  if (text.startsWith('@')) throw bad('give the JSON content; "@file" is read by the CLI, not by the server');
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw bad('not valid JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad('not a JSON object');
  if (v.type !== undefined && v.type !== 'service_account') throw bad('type must be "service_account"');
  if (typeof v.client_email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(v.client_email)) throw bad('client_email is missing or invalid');
  if (typeof v.private_key !== 'string') throw bad('private_key is missing');
  try {
    const k = createPrivateKey(v.private_key);
    if (k.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  } catch {
    throw bad('private_key is not an RSA private key in PEM form');
  }
  const tokenUri = typeof v.token_uri === 'string' && v.token_uri !== '' ? v.token_uri : DEFAULT_TOKEN_URI;
  try {
    const u = new URL(tokenUri);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
  } catch {
    throw bad('token_uri must be an http(s) URL');
  }
  return {
    client_email: v.client_email,
    private_key: v.private_key,
    private_key_id: typeof v.private_key_id === 'string' ? v.private_key_id : undefined,
    token_uri: tokenUri,
    project_id: typeof v.project_id === 'string' ? v.project_id : undefined,
  };
}

/** Labels: keys start with a lowercase letter, then [a-z0-9_-], 1-63; values 0-63 of the same set. */
export function gcpLabels(tags: Record<string, string>): Record<string, string> {
  const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9_-]/g, '_').slice(0, 63);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(tags)) {
    let key = norm(k);
    if (!/^[a-z]/.test(key)) key = ('k' + key).slice(0, 63);
    out[key] = norm(v);
  }
  return out;
}

function googleDetail(b: Record<string, unknown> | null): string {
  const e = (b?.error ?? {}) as { status?: string; message?: string } | string;
  if (typeof e === 'string') return [e, b?.error_description].filter(Boolean).join(' ');
  return [e.status, e.message].filter(Boolean).join(' ');
}

class GoogleConnector implements Connector {
  private token: { value: string; expiresAt: number } | null = null;
  private readonly sa: ServiceAccount;
  private readonly project: string;
  private readonly base: string;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    this.sa = parseServiceAccount(String(dest.connection.credentials));
    this.project = String(dest.connection.project_id || this.sa.project_id || '');
    this.base = baseUrl(dest.connection.endpoint_url, 'https://secretmanager.googleapis.com') + '/v1';
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
    const iat = Math.floor(now / 1000);
    const assertion = signJwtRs256({ iss: this.sa.client_email, scope: SCOPE, aud: this.sa.token_uri, iat, exp: iat + 3600 }, this.sa.private_key, this.sa.private_key_id);
    const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
    const r = await this.deps.http.send({ method: 'POST', url: this.sa.token_uri, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body, what: 'token' }, signal);
    if (!ok(r)) throw failureOf(r, 'token', googleDetail, now);
    const b = jsonOf(r);
    const value = typeof b?.access_token === 'string' ? b.access_token : '';
    if (!value) throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'token: reply has no access_token', { retryable: true });
    const ttl = Number(b?.expires_in ?? 3600);
    this.token = { value, expiresAt: now + Math.max(0, Math.min(ttl - 60, ttl / 2)) * 1000 };
    return value;
  }

  private async call(method: string, path: string, body: unknown, what: string, signal: AbortSignal): Promise<HttpReply> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.bearer(signal);
      const r = await this.deps.http.send(
        { method, url: this.base + path, headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body), what },
        signal,
      );
      if (r.status === 401 && attempt === 0) {
        this.token = null;
        continue;
      }
      return r;
    }
  }

  private secretPath(name: string): string {
    return `/projects/${encodeURIComponent(this.project)}/secrets/${encodeURIComponent(name)}`;
  }

  async put(name: string, value: string, signal: AbortSignal): Promise<void> {
    if (!this.project) throw new SyncFailure('CLIENT_SIDE_ERROR', 'no project: set project_id or use credentials that carry one');
    const data = Buffer.from(value, 'utf8');
    const version = { payload: { data: data.toString('base64'), dataCrc32c: String(crc32c(data)) } };
    let r = await this.call('POST', `${this.secretPath(name)}:addVersion`, version, 'add version', signal);
    if (r.status === 404) {
      const create = await this.call(
        'POST',
        `/projects/${encodeURIComponent(this.project)}/secrets?secretId=${encodeURIComponent(name)}`,
        { replication: { automatic: {} }, labels: gcpLabels(tagsOf(this.dest)) },
        'create secret',
        signal,
      );
      if (!ok(create) && create.status !== 409) throw failureOf(create, 'create secret', googleDetail, this.deps.now());
      r = await this.call('POST', `${this.secretPath(name)}:addVersion`, version, 'add version', signal);
    }
    if (!ok(r)) throw failureOf(r, 'add version', googleDetail, this.deps.now());
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    if (!this.project) throw new SyncFailure('CLIENT_SIDE_ERROR', 'no project: set project_id or use credentials that carry one');
    const r = await this.call('DELETE', this.secretPath(name), undefined, 'delete secret', signal);
    if (r.status === 404 || ok(r)) return;
    throw failureOf(r, 'delete secret', googleDetail, this.deps.now());
  }

  close(): void {
    this.token = null;
  }
}

/** The provider-c-sm destination type. */
export const providerCSm: DestinationTypeDef = {
  type: 'provider-c-sm',
  provider: 'Google Cloud Secret Manager',
  fields: {
    credentials: f.string('Service-account key JSON (content; the CLI reads @file); its token_uri is the token endpoint').sensitive(),
    project_id: f.string('Target project; default is project_id of the credentials'),
    endpoint_url: endpointField,
  },
  required: ['credentials'],
  immutable: [],
  defaults: { project_id: '', endpoint_url: '' },
  defaultGranularity: 'secret-path',
  defaultTemplates: {
    'secret-path': 'vault_{{ .MountAccessor }}_{{ .SecretPath }}',
    'secret-key': 'vault_{{ .MountAccessor }}_{{ .SecretPath }}_{{ .SecretKey }}',
  },
  customTags: true,
  // cloud.google.com Secret Manager Secret.labels: at most 64 labels, counted after normalization (which
  // also cuts keys and values to 63 characters), keyhold's own included.
  tagLimits: { max: 64, keyLength: 128, valueLength: 256, source: 'Google Secret Manager labels' },
  check(conn) {
    const sa = parseServiceAccount(String(conn.credentials ?? ''));
    checkUrlField(conn, 'endpoint_url');
    if (!conn.project_id && !sa.project_id) throw invalid('project_id', 'is required when the credentials carry no project_id');
    if (conn.project_id && !/^[a-z0-9][a-z0-9:.-]{0,127}$/i.test(String(conn.project_id))) throw invalid('project_id', 'must be a project id');
  },
  connect: (dest, deps) => new GoogleConnector(dest, deps),
};
