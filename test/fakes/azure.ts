/**
 * Azure Key Vault fake: an OAuth2 client-credentials token endpoint and the Secrets REST API, checking
 * what the real service checks (reference sync-wire.md 3.2 and 4.2): form-encoded grant with the
 * registered client id/secret and the vault scope; bearer tokens it issued and that have not expired;
 * `api-version`; name pattern and length; 25 KB values; soft delete (409 ObjectIsDeletedButRecoverable),
 * recover and purge; 404 SecretNotFound. Delete and recover complete asynchronously, as the real
 * service documents (soft-delete overview; "recover deleted secret" is a long-running operation):
 * with `deleteDelayMs` / `recoverDelayMs` set, a deleted secret is "being deleted" for that long (PUT
 * and recover answer 409 ObjectIsBeingDeleted, GET deletedsecrets 404) and a recovered one "being
 * recovered" (PUT and DELETE answer 409 ObjectIsBeingRecovered, GET 404). At most 15 tags per secret
 * (Key Vault service limits), names 512 and values 256 characters.
 */
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { FakeProvider, bearerOf, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

/** A stored secret. */
export interface AzureSecret {
  name: string;
  versions: Array<{ id: string; value: string; tags: Record<string, string>; created: number }>;
}

const err = (status: number, code: string, message: string, inner?: string): FakeReply => ({
  status,
  json: { error: { code, message, ...(inner ? { innererror: { code: inner } } : {}) } },
});

/** Azure Key Vault fake. */
export class AzureFake extends FakeProvider {
  readonly tenant = 'tenant-' + randomBytes(4).toString('hex');
  readonly clientId = 'client-' + randomBytes(4).toString('hex');
  readonly clientSecret = randomBytes(16).toString('hex');
  /** Token lifetime in seconds (shorten to test renewal). */
  tokenTtl = 3600;
  readonly tokens = new Map<string, number>();
  readonly secrets = new Map<string, AzureSecret>();
  readonly deleted = new Map<string, AzureSecret>();
  tokensIssued = 0;
  /** How long a delete and a recover take to complete (0: at once). */
  deleteDelayMs = 0;
  recoverDelayMs = 0;
  /** Names (lower-case) being deleted / recovered, and until when. */
  readonly deleting = new Map<string, number>();
  readonly recovering = new Map<string, number>();
  /** Recover operations accepted. */
  recovers = 0;
  /** 409 answers given for transient states, by inner code. */
  readonly conflicts: Record<string, number> = {};
  /**
   * A federated identity credential on the app registration (learn.microsoft.com "workload identity
   * federation"): a client assertion is accepted when signed by a key of the issuer's JWKS, with
   * exactly this `iss`, `sub` and `aud`, and within its validity; else AADSTS errors as Entra ID answers.
   */
  federated: { issuer: string; subject: string; audience: string; jwks: () => Promise<JSONWebKeySet> } | null = null;
  /** Client assertions received (to inspect their claims). */
  readonly assertions: string[] = [];

  /** Current value of a secret (case-insensitive name), or undefined. */
  valueOf(name: string): string | undefined {
    const s = this.secrets.get(name.toLowerCase());
    return s?.versions[s.versions.length - 1]?.value;
  }
  tagsOf(name: string): Record<string, string> | undefined {
    const s = this.secrets.get(name.toLowerCase());
    return s?.versions[s.versions.length - 1]?.tags;
  }

  protected async handle(r: FakeRequest): Promise<FakeReply> {
    const p = r.url.pathname;
    const tokenPath = `/${this.tenant}/oauth2/v2.0/token`;
    if (r.method === 'POST' && p.endsWith('/oauth2/v2.0/token')) return await this.token(r, p === tokenPath);
    const token = bearerOf(r);
    const exp = token ? this.tokens.get(token) : undefined;
    if (!exp || exp < Date.now()) {
      return {
        status: 401,
        json: { error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' } },
        headers: {
          'WWW-Authenticate': `Bearer authorization="https://login.microsoftonline.com/${this.tenant}", resource="https://vault.azure.net"`,
        },
      };
    }
    if (!r.url.searchParams.get('api-version'))
      return err(400, 'BadParameter', 'The request URI contains an invalid or missing api-version');
    let m = /^\/secrets\/([^/]+)$/.exec(p);
    if (m) return this.secret(r, decodeURIComponent(m[1]!));
    m = /^\/deletedsecrets\/([^/]+)(\/recover)?$/.exec(p);
    if (m) return this.deletedSecret(r, decodeURIComponent(m[1]!), Boolean(m[2]));
    return err(404, 'NotFound', 'no such path');
  }

  private async token(r: FakeRequest, rightTenant: boolean): Promise<FakeReply> {
    if (!rightTenant)
      return { status: 400, json: { error: 'invalid_request', error_description: 'AADSTS90002: Tenant not found.' } };
    if (!String(r.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return {
        status: 400,
        json: { error: 'invalid_request', error_description: 'AADSTS900144: body must be form encoded' },
      };
    const f = new URLSearchParams(r.text);
    if (f.get('grant_type') !== 'client_credentials') return { status: 400, json: { error: 'unsupported_grant_type' } };
    if (f.get('scope') !== 'https://vault.azure.net/.default') return { status: 400, json: { error: 'invalid_scope' } };
    if (f.get('client_assertion') !== null || f.get('client_assertion_type') !== null) {
      const why = await this.assertionProblem(f);
      if (why) return { status: why.status, json: { error: why.error, error_description: why.description } };
    } else if (f.get('client_id') !== this.clientId || f.get('client_secret') !== this.clientSecret) {
      return {
        status: 401,
        json: { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' },
      };
    }
    const access = randomBytes(24).toString('base64url');
    this.tokens.set(access, Date.now() + this.tokenTtl * 1000);
    this.tokensIssued++;
    return {
      status: 200,
      json: { token_type: 'Bearer', expires_in: this.tokenTtl, ext_expires_in: this.tokenTtl, access_token: access },
    };
  }

  /** Why a client-assertion request is refused (Entra ID's codes), or null. */
  private async assertionProblem(
    f: URLSearchParams,
  ): Promise<{ status: number; error: string; description: string } | null> {
    if (f.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
      return {
        status: 400,
        error: 'invalid_request',
        description:
          "AADSTS50027: client_assertion_type must be 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'",
      };
    if (f.get('client_secret') !== null)
      return {
        status: 400,
        error: 'invalid_request',
        description: 'AADSTS700025: client_secret and client_assertion are mutually exclusive',
      };
    if (f.get('client_id') !== this.clientId)
      return {
        status: 400,
        error: 'unauthorized_client',
        description: 'AADSTS700016: Application not found in the directory',
      };
    const assertion = f.get('client_assertion') ?? '';
    this.assertions.push(assertion);
    const fed = this.federated;
    if (!fed)
      return {
        status: 401,
        error: 'invalid_client',
        description: 'AADSTS70021: No matching federated identity record found for presented assertion.',
      };
    try {
      const { payload } = await jwtVerify(assertion, createLocalJWKSet(await fed.jwks()), { clockTolerance: 0 });
      if (payload.iss !== fed.issuer || payload.sub !== fed.subject || ![payload.aud].flat().includes(fed.audience)) {
        return {
          status: 401,
          error: 'invalid_client',
          description: `AADSTS70021: No matching federated identity record found for presented assertion. Assertion Issuer: '${payload.iss}'. Assertion Subject: '${payload.sub}'. Assertion Audience: '${payload.aud}'.`,
        };
      }
      if (!payload.exp)
        return {
          status: 401,
          error: 'invalid_client',
          description: 'AADSTS700024: Client assertion is not within its valid time range.',
        };
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ERR_JWT_EXPIRED' || code === 'ERR_JWT_CLAIM_VALIDATION_FAILED')
        return {
          status: 401,
          error: 'invalid_client',
          description: 'AADSTS700024: Client assertion is not within its valid time range.',
        };
      return {
        status: 401,
        error: 'invalid_client',
        description: `AADSTS50013: Assertion failed signature validation. (${(e as Error).message})`,
      };
    }
    return null;
  }

  /** Whether `key` is still being deleted / recovered (expired entries are dropped). */
  private busy(map: Map<string, number>, key: string): boolean {
    const until = map.get(key);
    if (until === undefined) return false;
    if (Date.now() < until) return true;
    map.delete(key);
    return false;
  }

  private conflict(name: string, inner: 'ObjectIsBeingDeleted' | 'ObjectIsBeingRecovered'): FakeReply {
    this.conflicts[inner] = (this.conflicts[inner] ?? 0) + 1;
    const what = inner === 'ObjectIsBeingDeleted' ? 'deleted' : 'recovered';
    return err(409, 'Conflict', `Secret ${name} is currently being ${what}.`, inner);
  }

  private secret(r: FakeRequest, name: string): FakeReply {
    if (!/^[0-9a-zA-Z-]{1,127}$/.test(name))
      return err(400, 'BadParameter', 'The request URI contains an invalid name');
    const key = name.toLowerCase();
    if (this.busy(this.recovering, key)) {
      if (r.method === 'GET')
        return err(404, 'SecretNotFound', `A secret with (name/id) ${name} was not found in this key vault.`);
      return this.conflict(name, 'ObjectIsBeingRecovered');
    }
    if (this.busy(this.deleting, key)) {
      if (r.method === 'PUT') return this.conflict(name, 'ObjectIsBeingDeleted');
      return err(404, 'SecretNotFound', `A secret with (name/id) ${name} was not found in this key vault.`);
    }
    if (r.method === 'PUT') {
      const b = jsonBody(r);
      if (!b || typeof b.value !== 'string') return err(400, 'BadParameter', 'Property value is required');
      if (Buffer.byteLength(b.value) > 25 * 1024) return err(400, 'BadParameter', 'Secret value too large');
      const tags = (b.tags ?? {}) as Record<string, string>;
      if (Object.keys(tags).length > 15)
        return err(400, 'BadParameter', 'The number of tags exceeds the maximum of 15.');
      for (const [k, v] of Object.entries(tags))
        if (k.length > 512 || String(v).length > 256) return err(400, 'BadParameter', 'Tag name or value too long.');
      if (this.deleted.has(key))
        return err(
          409,
          'Conflict',
          `Secret ${name} is currently in a deleted but recoverable state, and its name cannot be reused; in this state, the secret can only be recovered or purged.`,
          'ObjectIsDeletedButRecoverable',
        );
      const s = this.secrets.get(key) ?? { name, versions: [] };
      const id = randomBytes(16).toString('hex');
      s.versions.push({ id, value: b.value, tags: (b.tags as Record<string, string>) ?? {}, created: Date.now() });
      this.secrets.set(key, s);
      return {
        status: 200,
        json: {
          value: b.value,
          id: `${this.url}/secrets/${s.name}/${id}`,
          attributes: { enabled: true, recoveryLevel: 'Recoverable+Purgeable' },
          tags: b.tags ?? {},
        },
      };
    }
    const s = this.secrets.get(key);
    if (!s) return err(404, 'SecretNotFound', `A secret with (name/id) ${name} was not found in this key vault.`);
    if (r.method === 'GET') {
      const v = s.versions[s.versions.length - 1]!;
      return {
        status: 200,
        json: {
          value: v.value,
          id: `${this.url}/secrets/${s.name}/${v.id}`,
          attributes: { enabled: true },
          tags: v.tags,
        },
      };
    }
    if (r.method === 'DELETE') {
      this.secrets.delete(key);
      this.deleted.set(key, s);
      if (this.deleteDelayMs > 0) this.deleting.set(key, Date.now() + this.deleteDelayMs);
      return {
        status: 200,
        json: {
          recoveryId: `${this.url}/deletedsecrets/${s.name}`,
          deletedDate: Math.floor(Date.now() / 1000),
          id: `${this.url}/secrets/${s.name}`,
        },
      };
    }
    return err(405, 'MethodNotAllowed', 'method not allowed');
  }

  private deletedSecret(r: FakeRequest, name: string, recover: boolean): FakeReply {
    const key = name.toLowerCase();
    if (this.busy(this.deleting, key)) {
      if (recover) return this.conflict(name, 'ObjectIsBeingDeleted');
      return err(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
    }
    if (this.busy(this.recovering, key))
      return recover
        ? this.conflict(name, 'ObjectIsBeingRecovered')
        : err(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
    const s = this.deleted.get(key);
    if (!s) return err(404, 'SecretNotFound', `Deleted Secret not found: ${name}`);
    if (recover && r.method === 'POST') {
      this.deleted.delete(key);
      this.secrets.set(key, s);
      this.recovers++;
      if (this.recoverDelayMs > 0) this.recovering.set(key, Date.now() + this.recoverDelayMs);
      return { status: 200, json: { id: `${this.url}/secrets/${s.name}` } };
    }
    if (!recover && r.method === 'DELETE') {
      this.deleted.delete(key);
      return { status: 204 };
    }
    if (!recover && r.method === 'GET')
      return { status: 200, json: { recoveryId: `${this.url}/deletedsecrets/${s.name}` } };
    return err(405, 'MethodNotAllowed', 'method not allowed');
  }
}
