/**
 * provider-c-sm: Google Cloud Secret Manager (reference sync-wire.md 1.5.4 and 3.3). A service-account
 * JWT (RS256, `aud` = token_uri) is exchanged at the credentials' `token_uri` for an access token
 * (cached until shortly before expiry); then the v1 REST API: create secret, add version, delete.
 * Without a key, federation (google-federation.ts): keyhold's identity token through Google's STS,
 * optionally impersonating a service account. Secrets are created with automatic replication or
 * the replication locations, encrypted with `kms_key_name` when set.
 */
import { createPrivateKey } from 'node:crypto';
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { SyncFailure } from '../failure.js';
import { failureOf, jsonOf, ok, type HttpReply } from '../http-client.js';
import { crc32c } from '../crc32c.js';
import { signJwtRs256 } from '../jwt.js';
import {
  baseUrl,
  checkUrlField,
  endpointField,
  tagsOf,
  type Connector,
  type ConnectorDeps,
  type DestinationTypeDef,
} from './common.js';
import type { DestinationRecord } from '../types.js';
import {
  FEDERATION_DEFAULTS,
  FEDERATION_FIELDS,
  checkFederationFields,
  federated,
  federationOf,
} from './federation.js';
import { DEFAULT_GOOGLE_STS, DEFAULT_IAM_CREDENTIALS, federatedGoogleToken } from './google-federation.js';

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
  if (typeof v.client_email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(v.client_email))
    throw bad('client_email is missing or invalid');
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
  const norm = (s: string) =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, '_')
      .slice(0, 63);
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
  /** The service-account key, or null with federation. */
  private readonly sa: ServiceAccount | null;
  private readonly project: string;
  private readonly base: string;
  constructor(
    private readonly dest: DestinationRecord,
    private readonly deps: ConnectorDeps,
  ) {
    this.sa = federated(dest.connection) ? null : parseServiceAccount(String(dest.connection.credentials));
    this.project = String(dest.connection.project_id || this.sa?.project_id || '');
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
    if (!this.sa) {
      const c = this.dest.connection;
      this.token = await federatedGoogleToken(
        this.deps.http,
        federationOf(this.dest, this.deps),
        {
          stsEndpoint: baseUrl(c.sts_endpoint, DEFAULT_GOOGLE_STS),
          iamEndpoint: baseUrl(c.iam_credentials_endpoint, DEFAULT_IAM_CREDENTIALS),
          serviceAccount: String(c.service_account_email ?? ''),
          now: this.deps.now,
        },
        signal,
      );
      return this.token.value;
    }
    const now = this.deps.now();
    const iat = Math.floor(now / 1000);
    const assertion = signJwtRs256(
      { iss: this.sa.client_email, scope: SCOPE, aud: this.sa.token_uri, iat, exp: iat + 3600 },
      this.sa.private_key,
      this.sa.private_key_id,
    );
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      assertion,
    }).toString();
    const r = await this.deps.http.send(
      {
        method: 'POST',
        url: this.sa.token_uri,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body,
        what: 'token',
      },
      signal,
    );
    if (!ok(r)) throw failureOf(r, 'token', googleDetail, now);
    const b = jsonOf(r);
    const value = typeof b?.access_token === 'string' ? b.access_token : '';
    if (!value)
      throw new SyncFailure('EXTERNAL_SERVICE_ERROR', 'token: reply has no access_token', { retryable: true });
    const ttl = Number(b?.expires_in ?? 3600);
    this.token = { value, expiresAt: now + Math.max(0, Math.min(ttl - 60, ttl / 2)) * 1000 };
    return value;
  }

  private async call(
    method: string,
    path: string,
    body: unknown,
    what: string,
    signal: AbortSignal,
  ): Promise<HttpReply> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.bearer(signal);
      const r = await this.deps.http.send(
        {
          method,
          url: this.base + path,
          headers: {
            Authorization: `Bearer ${token}`,
            Accept: 'application/json',
            ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          what,
        },
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
    if (!this.project)
      throw new SyncFailure('CLIENT_SIDE_ERROR', 'no project: set project_id or use credentials that carry one');
    const data = Buffer.from(value, 'utf8');
    const version = { payload: { data: data.toString('base64'), dataCrc32c: String(crc32c(data)) } };
    let r = await this.call('POST', `${this.secretPath(name)}:addVersion`, version, 'add version', signal);
    if (r.status === 404) {
      const create = await this.call(
        'POST',
        `/projects/${encodeURIComponent(this.project)}/secrets?secretId=${encodeURIComponent(name)}`,
        { replication: replicationOf(this.dest.connection), labels: gcpLabels(tagsOf(this.dest)) },
        'create secret',
        signal,
      );
      if (!ok(create) && create.status !== 409) throw failureOf(create, 'create secret', googleDetail, this.deps.now());
      r = await this.call('POST', `${this.secretPath(name)}:addVersion`, version, 'add version', signal);
    }
    if (!ok(r)) throw failureOf(r, 'add version', googleDetail, this.deps.now());
  }

  async remove(name: string, signal: AbortSignal): Promise<void> {
    if (!this.project)
      throw new SyncFailure('CLIENT_SIDE_ERROR', 'no project: set project_id or use credentials that carry one');
    const r = await this.call('DELETE', this.secretPath(name), undefined, 'delete secret', signal);
    if (r.status === 404 || ok(r)) return;
    throw failureOf(r, 'delete secret', googleDetail, this.deps.now());
  }

  close(): void {
    this.token = null;
  }
}

/** Google Cloud locations (regions such as us-central1, europe-west4). */
const LOCATION = /^[a-z]+(-[a-z]+)*\d{0,2}(-[a-z0-9]+)*$/;
const KMS_KEY = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

/** The replication locations of a connection (replication_locations, else its alias replica_regions). */
function locationsOf(c: Record<string, unknown>): string[] {
  const a = Array.isArray(c.replication_locations) ? (c.replication_locations as string[]) : [];
  const b = Array.isArray(c.replica_regions) ? (c.replica_regions as string[]) : [];
  return a.length ? a : b;
}

function checkReplication(conn: Record<string, unknown>): void {
  const field =
    Array.isArray(conn.replication_locations) && conn.replication_locations.length
      ? 'replication_locations'
      : 'replica_regions';
  const locs = locationsOf(conn);
  for (const l of locs)
    if (!LOCATION.test(l) || l.length > 64)
      throw invalid(field, `"${String(l).slice(0, 40)}" is not a Google Cloud location such as us-central1`);
  if (new Set(locs).size !== locs.length) throw invalid(field, 'lists a location twice');
  const key = String(conn.kms_key_name ?? '');
  if (key && !KMS_KEY.test(key))
    throw invalid('kms_key_name', 'must be projects/P/locations/L/keyRings/R/cryptoKeys/K');
  // A key encrypts replicas in its own location only: with user-managed replication, one location.
  if (key && locs.length > 1)
    throw invalid(
      'kms_key_name',
      'applies to automatic replication or a single replication location (a key serves its own location only)',
    );
  if (key && locs.length === 1 && !key.includes(`/locations/${locs[0]}/`))
    throw invalid('kms_key_name', `must be in the replication location ${locs[0]}`);
}

/** The `replication` of a secret keyhold creates: automatic or user-managed, with the customer-managed key when set. */
export function replicationOf(c: Record<string, unknown>): Record<string, unknown> {
  const key = String(c.kms_key_name ?? '');
  const cmek = key ? { customerManagedEncryption: { kmsKeyName: key } } : {};
  const locs = locationsOf(c);
  if (locs.length === 0) return { automatic: { ...cmek } };
  return { userManaged: { replicas: locs.map((location) => ({ location, ...cmek })) } };
}

/** The provider-c-sm destination type. */
export const providerCSm: DestinationTypeDef = {
  type: 'provider-c-sm',
  provider: 'Google Cloud Secret Manager',
  fields: {
    credentials: f
      .string(
        'Service-account key JSON (content; the CLI reads @file); its token_uri is the token endpoint; not needed with federation',
      )
      .sensitive(),
    project_id: f.string('Target project; default is project_id of the credentials (required with federation)'),
    endpoint_url: endpointField,
    ...FEDERATION_FIELDS,
    service_account_email: f.string(
      'With federation: the service account to impersonate (IAM Credentials generateAccessToken); empty uses the federated token directly',
    ),
    sts_endpoint: f.string('Google Security Token Service (default https://sts.googleapis.com)'),
    iam_credentials_endpoint: f.string('Google IAM Credentials API (default https://iamcredentials.googleapis.com)'),
    replication_locations: f.strings('Locations of user-managed replication (default automatic replication)'),
    replica_regions: f.strings('Alias of replication_locations'),
    kms_key_name: f.string(
      'Customer-managed encryption key (projects/P/locations/L/keyRings/R/cryptoKeys/K) of the secrets keyhold creates',
    ),
  },
  required: [],
  immutable: [],
  defaults: {
    credentials: '',
    project_id: '',
    endpoint_url: '',
    ...FEDERATION_DEFAULTS,
    service_account_email: '',
    sts_endpoint: '',
    iam_credentials_endpoint: '',
    replication_locations: [],
    replica_regions: [],
    kms_key_name: '',
  },
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
    checkUrlField(conn, 'endpoint_url');
    checkFederationFields(conn);
    checkUrlField(conn, 'sts_endpoint');
    checkUrlField(conn, 'iam_credentials_endpoint');
    if (federated(conn)) {
      if (conn.credentials)
        throw invalid('credentials', 'give credentials or identity_token_audience (federation), not both');
      if (!String(conn.identity_token_audience).startsWith('//iam.googleapis.com/'))
        throw invalid(
          'identity_token_audience',
          'must name the workload identity pool provider: //iam.googleapis.com/projects/NUMBER/locations/global/workloadIdentityPools/POOL/providers/PROVIDER',
        );
      if (!conn.project_id)
        throw invalid('project_id', 'is required with federation (there are no credentials to take it from)');
      if (conn.service_account_email && !/^[^@\s]+@[^@\s]+$/.test(String(conn.service_account_email)))
        throw invalid('service_account_email', 'must be a service account email');
    } else {
      if (!conn.credentials)
        throw invalid(
          'credentials',
          'is required (or set identity_token_audience to use workload identity federation)',
        );
      const sa = parseServiceAccount(String(conn.credentials ?? ''));
      if (!conn.project_id && !sa.project_id)
        throw invalid('project_id', 'is required when the credentials carry no project_id');
    }
    checkReplication(conn);
    if (conn.project_id && !/^[a-z0-9][a-z0-9:.-]{0,127}$/i.test(String(conn.project_id)))
      throw invalid('project_id', 'must be a project id');
  },
  connect: (dest, deps) => new GoogleConnector(dest, deps),
};
