/**
 * Google Secret Manager fake (reference sync-wire.md 3.3 and 4.2): holds a service account's RSA key
 * pair and hands out its credentials JSON with `token_uri` pointing here. The token endpoint verifies
 * the RS256 JWT against the public key and checks iss, aud, scope and iat/exp; the API requires the
 * issued bearer, enforces the secret-id pattern, 409 on duplicate create, decodes base64 payloads,
 * verifies dataCrc32c (CRC-32C, computed here bit by bit, independently of src/), 64 KiB, label rules.
 */
import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { FakeProvider, bearerOf, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

/** Bitwise CRC-32C (no table; independent of the connector's table-driven one). */
export function crc32cBitwise(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1));
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const gerr = (code: number, status: string, message: string): FakeReply => ({
  status: code,
  json: { error: { code, message, status } },
});

/** Google Secret Manager fake. */
export class GoogleFake extends FakeProvider {
  readonly project = 'proj-' + randomBytes(3).toString('hex');
  readonly clientEmail = `sync@${this.project}.iam.gserviceaccount.com`;
  readonly keyId = randomBytes(8).toString('hex');
  private readonly publicKey: KeyObject;
  private readonly privatePem: string;
  readonly tokens = new Map<string, number>();
  readonly secrets = new Map<
    string,
    { labels: Record<string, string>; versions: string[]; replication?: Record<string, unknown> }
  >();
  /**
   * Workload identity federation (cloud.google.com "workload identity federation", STS token exchange,
   * IAM Credentials generateAccessToken): a pool provider named `audience` trusting `issuer` (tokens
   * checked against its JWKS, `aud` must list the provider, `sub` must pass the attribute condition),
   * and a service account the pool's principals may impersonate; `directAccess` lets federated
   * tokens call Secret Manager themselves.
   */
  federation: {
    issuer: string;
    audience: string;
    subject: string;
    jwks: () => Promise<JSONWebKeySet>;
    serviceAccount: string;
    directAccess: boolean;
  } | null = null;
  /** Federated access tokens issued by the STS, with their expiry. */
  readonly federatedTokens = new Map<string, number>();
  /** Subject tokens the STS received, and impersonations granted. */
  readonly subjectTokens: string[] = [];
  impersonations = 0;
  tokensIssued = 0;
  /** Why the last token request was refused (for test diagnostics). */
  lastTokenError = '';

  constructor() {
    super();
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  get tokenUri(): string {
    return `${this.url}/token`;
  }

  /** A service-account key file for this fake (optionally signed with another key). */
  credentials(overrides: Record<string, unknown> = {}): string {
    return JSON.stringify({
      type: 'service_account',
      project_id: this.project,
      private_key_id: this.keyId,
      private_key: this.privatePem,
      client_email: this.clientEmail,
      client_id: '1234567890',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: this.tokenUri,
      universe_domain: 'googleapis.com',
      ...overrides,
    });
  }

  /** Latest value of a secret, or undefined. */
  valueOf(id: string): string | undefined {
    const s = this.secrets.get(id);
    return s?.versions[s.versions.length - 1];
  }

  protected async handle(r: FakeRequest): Promise<FakeReply> {
    if (r.method === 'POST' && r.url.pathname === '/token') return this.token(r);
    if (r.method === 'POST' && r.url.pathname === '/v1/token') return await this.exchange(r);
    const t = bearerOf(r);
    const impersonate = /^\/v1\/projects\/-\/serviceAccounts\/([^/:]+):generateAccessToken$/.exec(r.url.pathname);
    if (impersonate && r.method === 'POST') return this.generateAccessToken(t, decodeURIComponent(impersonate[1]!));
    const fedExp = t && this.federation?.directAccess ? this.federatedTokens.get(t) : undefined;
    const exp = t ? (this.tokens.get(t) ?? fedExp) : undefined;
    if (!exp || exp < Date.now())
      return gerr(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    const base = `/v1/projects/${this.project}/secrets`;
    const p = r.url.pathname;
    if (!p.startsWith('/v1/projects/')) return gerr(404, 'NOT_FOUND', 'no such path');
    if (!p.startsWith(base))
      return gerr(403, 'PERMISSION_DENIED', 'Permission denied on resource project (or it may not exist).');
    if (p === base && r.method === 'POST') return this.create(r);
    let m = /^\/([^/:]+):addVersion$/.exec(p.slice(base.length));
    if (m && r.method === 'POST') return this.addVersion(r, decodeURIComponent(m[1]!));
    m = /^\/([^/:]+)\/versions\/latest:access$/.exec(p.slice(base.length));
    if (m && r.method === 'GET') {
      const v = this.valueOf(decodeURIComponent(m[1]!));
      if (v === undefined) return gerr(404, 'NOT_FOUND', 'Secret not found');
      const data = Buffer.from(v, 'utf8');
      return {
        status: 200,
        json: {
          name: `${base}/${m[1]}/versions/1`,
          payload: { data: data.toString('base64'), dataCrc32c: String(crc32cBitwise(data)) },
        },
      };
    }
    m = /^\/([^/:]+)$/.exec(p.slice(base.length));
    if (m && r.method === 'DELETE') {
      const id = decodeURIComponent(m[1]!);
      if (!this.secrets.delete(id))
        return gerr(404, 'NOT_FOUND', `Secret [projects/${this.project}/secrets/${id}] not found.`);
      return { status: 200, json: {} };
    }
    return gerr(404, 'NOT_FOUND', 'no such path');
  }

  /** STS token exchange (RFC 8693) of an OIDC token for a federated access token. */
  private async exchange(r: FakeRequest): Promise<FakeReply> {
    const refuse = (why: string): FakeReply => {
      this.lastTokenError = why;
      return { status: 400, json: { error: 'invalid_grant', error_description: why } };
    };
    const f = new URLSearchParams(r.text);
    if (f.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange')
      return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' } };
    if (
      f.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:jwt' &&
      f.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:id_token'
    )
      return { status: 400, json: { error: 'invalid_request', error_description: 'Invalid subject_token_type' } };
    if (f.get('requested_token_type') !== 'urn:ietf:params:oauth:token-type:access_token')
      return { status: 400, json: { error: 'invalid_request', error_description: 'Invalid requested_token_type' } };
    const fed = this.federation;
    if (!fed || f.get('audience') !== fed.audience)
      return {
        status: 400,
        json: {
          error: 'invalid_target',
          error_description: 'The target service indicated by the "audience" parameters is invalid.',
        },
      };
    const token = f.get('subject_token') ?? '';
    this.subjectTokens.push(token);
    try {
      const { payload } = await jwtVerify(token, createLocalJWKSet(await fed.jwks()));
      if (payload.iss !== fed.issuer)
        return refuse(`The issuer in ID Token ${payload.iss} does not match the expected ones: ${fed.issuer}.`);
      if (![payload.aud].flat().includes(fed.audience))
        return refuse(`The audience in ID Token [${payload.aud}] does not match the expected audience.`);
      if (payload.sub !== fed.subject) return refuse('The given credential is rejected by the attribute condition.');
      if (!payload.exp || !payload.iat) return refuse('ID Token lacks exp or iat.');
    } catch (e) {
      return refuse(`Invalid ID Token: ${(e as Error).message}`);
    }
    const access = 'fed.' + randomBytes(24).toString('base64url');
    this.federatedTokens.set(access, Date.now() + 3600_000);
    return {
      status: 200,
      json: {
        access_token: access,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: 3599,
      },
    };
  }

  /** IAM Credentials: a federated principal impersonates the service account it was granted. */
  private generateAccessToken(bearer: string | null, email: string): FakeReply {
    const exp = bearer ? this.federatedTokens.get(bearer) : undefined;
    if (!exp || exp < Date.now())
      return gerr(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    if (!this.federation || email !== this.federation.serviceAccount)
      return gerr(
        403,
        'PERMISSION_DENIED',
        "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist).",
      );
    const access = 'ya29.' + randomBytes(24).toString('base64url');
    this.tokens.set(access, Date.now() + 3600_000);
    this.impersonations++;
    return { status: 200, json: { accessToken: access, expireTime: new Date(Date.now() + 3600_000).toISOString() } };
  }

  private token(r: FakeRequest): FakeReply {
    const refuse = (why: string): FakeReply => {
      this.lastTokenError = why;
      return { status: 400, json: { error: 'invalid_grant', error_description: why } };
    };
    if (!String(r.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return refuse('not form encoded');
    const f = new URLSearchParams(r.text);
    if (f.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refuse('bad grant_type');
    const parts = (f.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return refuse('assertion is not a JWT');
    const [h, c, s] = parts as [string, string, string];
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    } catch {
      return refuse('malformed JWT');
    }
    if (header.alg !== 'RS256') return refuse('alg must be RS256');
    if (!verify('sha256', Buffer.from(`${h}.${c}`, 'ascii'), this.publicKey, Buffer.from(s, 'base64url')))
      return refuse('Invalid JWT Signature.');
    if (claims.iss !== this.clientEmail) return refuse('iss does not match the service account');
    if (claims.aud !== this.tokenUri) return refuse('aud must be the token_uri');
    if (
      typeof claims.scope !== 'string' ||
      !claims.scope.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')
    )
      return refuse('scope lacks cloud-platform');
    const now = Math.floor(Date.now() / 1000);
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (!Number.isInteger(iat) || !Number.isInteger(exp) || Math.abs(iat - now) > 300 || exp <= iat || exp - iat > 3600)
      return refuse('Invalid JWT: iat/exp');
    const access = 'ya29.' + randomBytes(24).toString('base64url');
    this.tokens.set(access, Date.now() + 3600_000);
    this.tokensIssued++;
    return { status: 200, json: { access_token: access, expires_in: 3599, token_type: 'Bearer' } };
  }

  private create(r: FakeRequest): FakeReply {
    const id = r.url.searchParams.get('secretId') ?? '';
    if (!/^[A-Za-z0-9_-]{1,255}$/.test(id)) return gerr(400, 'INVALID_ARGUMENT', 'Invalid secret id');
    const b = jsonBody(r);
    const rep = b?.replication as Record<string, unknown> | undefined;
    if (!rep || (!rep.automatic && !rep.userManaged)) return gerr(400, 'INVALID_ARGUMENT', 'replication is required');
    const replicas =
      (
        rep.userManaged as
          | { replicas?: Array<{ location?: string; customerManagedEncryption?: { kmsKeyName?: string } }> }
          | undefined
      )?.replicas ?? null;
    if (replicas !== null) {
      if (replicas.length === 0) return gerr(400, 'INVALID_ARGUMENT', 'userManaged.replicas must not be empty');
      for (const x of replicas) {
        const key = x.customerManagedEncryption?.kmsKeyName;
        if (key && !key.includes(`/locations/${x.location}/`))
          return gerr(400, 'INVALID_ARGUMENT', `The KMS key for replica ${x.location} must be in the same location.`);
      }
    }
    const labels = (b?.labels ?? {}) as Record<string, string>;
    if (Object.keys(labels).length > 64) return gerr(400, 'INVALID_ARGUMENT', 'too many labels');
    for (const [k, v] of Object.entries(labels)) {
      if (!/^[a-z][a-z0-9_-]{0,62}$/.test(k) || !/^[a-z0-9_-]{0,63}$/.test(v))
        return gerr(400, 'INVALID_ARGUMENT', `invalid label ${k}`);
    }
    if (this.secrets.has(id))
      return gerr(409, 'ALREADY_EXISTS', `Secret [projects/${this.project}/secrets/${id}] already exists.`);
    this.secrets.set(id, { labels, versions: [], replication: rep });
    return { status: 200, json: { name: `projects/${this.project}/secrets/${id}`, replication: rep, labels } };
  }

  private addVersion(r: FakeRequest, id: string): FakeReply {
    const s = this.secrets.get(id);
    if (!s)
      return gerr(404, 'NOT_FOUND', `Secret [projects/${this.project}/secrets/${id}] not found or has no versions.`);
    const payload = (jsonBody(r)?.payload ?? {}) as { data?: string; dataCrc32c?: string };
    if (typeof payload.data !== 'string') return gerr(400, 'INVALID_ARGUMENT', 'payload.data is required');
    const data = Buffer.from(payload.data, 'base64');
    if (data.length > 64 * 1024) return gerr(400, 'INVALID_ARGUMENT', 'Secret Payload cannot be larger than 64KiB.');
    if (payload.dataCrc32c !== undefined && String(crc32cBitwise(data)) !== String(payload.dataCrc32c))
      return gerr(400, 'INVALID_ARGUMENT', 'Checksum mismatch');
    s.versions.push(data.toString('utf8'));
    return {
      status: 200,
      json: { name: `projects/${this.project}/secrets/${id}/versions/${s.versions.length}`, state: 'ENABLED' },
    };
  }
}
