/**
 * GitHub Actions secrets fake (reference sync-wire.md 3.4 and 4.2): a real X25519 key pair per
 * repository with a key id; PUT bodies are opened with libsodium's crypto_box_seal_open and the key
 * id compared (422 otherwise); bearer token, Accept and X-GitHub-Api-Version headers required; name
 * rules (no GITHUB_ prefix, no leading digit, stored upper-case) and 48 KB; 201 create / 204 update;
 * DELETE 204 or 404. `rotateKey()` proves the connector fetches the key again.
 * Rate limits as GitHub documents them ("Rate limits for the REST API"): `rateLimit()` answers the
 * next requests 403 with `retry-after` (secondary limit) or with `x-ratelimit-remaining: 0` and
 * `x-ratelimit-reset` (primary limit); a request before the announced time is refused again.
 * `perWindow()` sets a primary limit of so many requests per window instead (a tight quota).
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import sodiumMod from 'libsodium-wrappers';
import { FakeProvider, bearerOf, jsonBody, type FakeReply, type FakeRequest } from './fake-server.js';

const sodium = sodiumMod as unknown as typeof import('libsodium-wrappers');

const gh = (status: number, message: string): FakeReply => ({
  status,
  json: { message, documentation_url: 'https://docs.github.com/rest' },
});

/** GitHub fake for one repository. */
export class GithubFake extends FakeProvider {
  readonly owner = 'acme';
  readonly repo = 'app-' + randomBytes(3).toString('hex');
  readonly token = 'github_pat_' + randomBytes(20).toString('hex');
  private keyPair!: { publicKey: Uint8Array; privateKey: Uint8Array };
  keyId = '';
  /** Scope ("" for repository, environment name otherwise) -> secret name -> plaintext. */
  readonly secrets = new Map<string, Map<string, string>>();

  override async start(): Promise<this> {
    await sodium.ready;
    this.rotateKey();
    this.orgKeyPair = sodium.crypto_box_keypair();
    this.orgKeyId = 'org-' + randomBytes(4).toString('hex');
    return super.start();
  }

  /** New repository key pair (old sealed values can no longer be opened). */
  rotateKey(): void {
    this.keyPair = sodium.crypto_box_keypair();
    this.keyId = String(Date.now()) + randomBytes(2).toString('hex');
  }

  /** Plaintext of a repository (or environment) secret. */
  valueOf(name: string, env = ''): string | undefined {
    return this.secrets.get(env)?.get(name);
  }
  names(env = ''): string[] {
    return [...(this.secrets.get(env)?.keys() ?? [])].sort();
  }

  readonly org = 'acme-org-' + randomBytes(3).toString('hex');
  readonly appId = 100000 + Math.floor(Math.random() * 800000);
  readonly installationId = 10_000_000 + Math.floor(Math.random() * 80_000_000);
  private readonly appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  /** The app's private key as GitHub hands it out (PKCS#1 PEM). */
  readonly appPrivateKey = this.appKeys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  /** Lifetime of issued installation tokens (seconds; shorten to test renewal). */
  installationTtlS = 3600;
  /** Issued installation tokens and their expiry (ms). */
  readonly installationTokens = new Map<string, number>();
  /** Installation tokens issued, and JWTs refused (with the reason). */
  installationTokensIssued = 0;
  readonly jwtRefusals: string[] = [];
  private orgKeyPair!: { publicKey: Uint8Array; privateKey: Uint8Array };
  orgKeyId = '';
  /** Organization secrets: name -> value and who may use it. */
  readonly orgSecrets = new Map<string, { value: string; visibility: string; selected_repository_ids?: number[] }>();
  /** Repositories of the organization by name (GitHub matches names case-insensitively) and their ids. */
  readonly orgRepos = new Map<string, number>([
    ['api', 1_000_000 + Math.floor(Math.random() * 9_000_000)],
    ['web', 1_000_000 + Math.floor(Math.random() * 9_000_000)],
  ]);
  /** `GET /repos/{owner}/{repo}` requests answered (name lookups). */
  repoLookups = 0;

  /** Pending rate-limit answers and the time before which every request is refused. */
  private limit: { remaining: number; kind: 'secondary' | 'primary'; waitS: number } | null = null;
  private limitedUntil = 0;
  /** Requests refused by a rate limit, and requests answered (arrival times, ms) after one. */
  rateLimited = 0;
  readonly arrivals: number[] = [];

  /**
   * Answer the next `times` requests with a rate limit asking to wait `waitS` seconds: `secondary`
   * (403, `retry-after`, GitHub's secondary-limit message) or `primary` (403,
   * `x-ratelimit-remaining: 0`, `x-ratelimit-reset` epoch seconds). Until that time has passed
   * every request is refused the same way, as GitHub does.
   */
  rateLimit(times: number, kind: 'secondary' | 'primary', waitS: number): void {
    this.limit = { remaining: times, kind, waitS };
  }

  private window: { limit: number; ms: number; start: number; count: number } | null = null;

  /**
   * A primary rate limit of `limit` requests per `windowMs` (every request counts, refused ones
   * too): past it, 403 with `x-ratelimit-remaining: 0` and `x-ratelimit-reset` at the window's end.
   */
  perWindow(limit: number, windowMs: number): void {
    this.window = { limit, ms: windowMs, start: 0, count: 0 };
  }

  private limited(): FakeReply | null {
    const now = Date.now();
    const w = this.window;
    if (w) {
      if (now - w.start >= w.ms) {
        w.start = now;
        w.count = 0;
      }
      if (++w.count > w.limit) {
        this.rateLimited++;
        return this.primaryLimit(w.start + w.ms);
      }
    }
    const kind = this.limit?.kind ?? 'secondary';
    if (this.limit && this.limit.remaining > 0) {
      this.limit.remaining--;
      this.limitedUntil = Math.max(this.limitedUntil, now + this.limit.waitS * 1000);
    } else if (now >= this.limitedUntil) return null;
    this.rateLimited++;
    const waitS = Math.max(1, Math.ceil((this.limitedUntil - now) / 1000));
    if (kind === 'secondary') {
      return {
        status: 403,
        json: {
          message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        headers: { 'retry-after': String(waitS) },
      };
    }
    return this.primaryLimit(this.limitedUntil);
  }

  /** GitHub's primary rate-limit answer, announcing the reset at `untilMs`. */
  private primaryLimit(untilMs: number): FakeReply {
    return {
      status: 403,
      json: {
        message: 'API rate limit exceeded for installation.',
        documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
      },
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-used': '5000',
        'x-ratelimit-reset': String(Math.ceil(untilMs / 1000)),
      },
    };
  }

  /** Check an app JWT as GitHub does; the reason when refused. */
  private jwtProblem(jwt: string): string | null {
    const parts = jwt.split('.');
    if (parts.length !== 3) return 'not a JWT';
    const [h, c, sig] = parts as [string, string, string];
    let header: Record<string, unknown>;
    let claims: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
    } catch {
      return 'undecodable JWT';
    }
    if (header.alg !== 'RS256') return 'alg must be RS256';
    if (
      !verify(
        'sha256',
        Buffer.from(`${h}.${c}`, 'ascii'),
        createPublicKey(this.appKeys.privateKey),
        Buffer.from(sig, 'base64url'),
      )
    )
      return 'signature does not verify with the app public key';
    if (String(claims.iss) !== String(this.appId)) return 'iss is not the app id';
    const now = Date.now() / 1000;
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return 'iat and exp are required';
    if (claims.exp - claims.iat > 600) return "'Expiration time' claim ('exp') is too far in the future";
    if (claims.exp <= now)
      return "'Expiration time' claim ('exp') must be a numeric value representing the future time";
    if (claims.iat > now + 60)
      return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued";
    return null;
  }

  private accessTokens(r: FakeRequest, installation: string): FakeReply {
    const jwt = bearerOf(r);
    const problem = jwt ? this.jwtProblem(jwt) : 'no bearer';
    if (problem) {
      this.jwtRefusals.push(problem);
      return gh(401, `A JSON web token could not be decoded (${problem})`);
    }
    if (installation !== String(this.installationId)) return gh(404, 'Not Found');
    const token = 'ghs_' + randomBytes(18).toString('base64url');
    const expires = Date.now() + this.installationTtlS * 1000;
    this.installationTokens.set(token, expires);
    this.installationTokensIssued++;
    return {
      status: 201,
      json: {
        token,
        expires_at: new Date(expires).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        permissions: { secrets: 'write', organization_secrets: 'write' },
        repository_selection: 'all',
      },
    };
  }

  private authorized(r: FakeRequest): boolean {
    const t = bearerOf(r);
    if (t === this.token) return true;
    const exp = t ? this.installationTokens.get(t) : undefined;
    return exp !== undefined && exp > Date.now();
  }

  /** `GET /repos/{owner}/{repo}` (authorized by the caller): the repository with its numeric id, or 404. */
  private repository(owner: string, name: string): FakeReply {
    this.repoLookups++;
    const id = owner.toLowerCase() === this.org.toLowerCase() ? this.orgRepos.get(name.toLowerCase()) : undefined;
    if (id === undefined) return gh(404, 'Not Found');
    return {
      status: 200,
      json: {
        id,
        node_id: 'R_' + Buffer.from(String(id)).toString('base64'),
        name,
        full_name: `${this.org}/${name}`,
        private: true,
        owner: { login: this.org, type: 'Organization' },
      },
    };
  }

  private orgSecret(r: FakeRequest, name: string): FakeReply {
    if (name === 'public-key' && r.method === 'GET')
      return {
        status: 200,
        json: { key_id: this.orgKeyId, key: Buffer.from(this.orgKeyPair.publicKey).toString('base64') },
      };
    const upper = name.toUpperCase();
    if (r.method === 'PUT') {
      if (!/^[A-Z_][A-Z0-9_]*$/.test(upper) || upper.startsWith('GITHUB_'))
        return gh(
          422,
          'Secret names can only contain alphanumeric characters or underscores, must not start with a number or GITHUB_',
        );
      const b = jsonBody(r);
      if (typeof b?.encrypted_value !== 'string' || typeof b?.key_id !== 'string')
        return gh(422, 'Invalid request: encrypted_value and key_id are required');
      if (!['all', 'private', 'selected'].includes(String(b.visibility)))
        return gh(422, 'Invalid request: visibility must be one of all, private, selected');
      const ids = b.selected_repository_ids;
      if (b.visibility === 'selected' && (!Array.isArray(ids) || !ids.every((x) => Number.isInteger(x))))
        return gh(422, 'Invalid request: selected_repository_ids must be an array of integers');
      if (b.key_id !== this.orgKeyId) return gh(422, 'Bad request - improperly encrypted secret (key_id)');
      let plain: Uint8Array;
      try {
        plain = sodium.crypto_box_seal_open(
          Buffer.from(b.encrypted_value, 'base64'),
          this.orgKeyPair.publicKey,
          this.orgKeyPair.privateKey,
        );
      } catch {
        return gh(422, 'Bad request - improperly encrypted secret');
      }
      const existed = this.orgSecrets.has(upper);
      this.orgSecrets.set(upper, {
        value: Buffer.from(plain).toString('utf8'),
        visibility: String(b.visibility),
        ...(b.visibility === 'selected' ? { selected_repository_ids: ids as number[] } : {}),
      });
      return existed ? { status: 204 } : { status: 201, json: {} };
    }
    if (r.method === 'DELETE') return this.orgSecrets.delete(upper) ? { status: 204 } : gh(404, 'Not Found');
    return gh(404, 'Not Found');
  }

  protected handle(r: FakeRequest): FakeReply {
    const app = /^\/app\/installations\/([^/]+)\/access_tokens$/.exec(r.url.pathname);
    if (app && r.method === 'POST') return this.accessTokens(r, decodeURIComponent(app[1]!));
    if (!this.authorized(r)) return gh(401, 'Bad credentials');
    const limited = this.limited();
    if (limited) return limited;
    this.arrivals.push(Date.now());
    if (!String(r.headers.accept ?? '').includes('application/vnd.github')) return gh(415, 'Unsupported Accept header');
    if (r.headers['x-github-api-version'] !== '2022-11-28') return gh(400, 'Invalid API version');
    const p = r.url.pathname;
    const org = /^\/orgs\/([^/]+)\/actions\/secrets\/([^/]+)$/.exec(p);
    if (org)
      return decodeURIComponent(org[1]!) === this.org
        ? this.orgSecret(r, decodeURIComponent(org[2]!))
        : gh(404, 'Not Found');
    const repo = /^\/repos\/([^/]+)\/([^/]+)$/.exec(p);
    if (repo && r.method === 'GET') return this.repository(decodeURIComponent(repo[1]!), decodeURIComponent(repo[2]!));
    const prefix = `/repos/${this.owner}/${this.repo}`;
    if (!p.startsWith(prefix + '/')) return gh(404, 'Not Found');
    const rest = p.slice(prefix.length);
    const m = /^(?:\/actions|\/environments\/([^/]+))\/secrets\/([^/]+)$/.exec(rest);
    if (!m) return gh(404, 'Not Found');
    const env = m[1] ? decodeURIComponent(m[1]) : '';
    const name = decodeURIComponent(m[2]!);
    if (name === 'public-key' && r.method === 'GET')
      return { status: 200, json: { key_id: this.keyId, key: Buffer.from(this.keyPair.publicKey).toString('base64') } };
    const scope = this.secrets.get(env) ?? new Map<string, string>();
    const upper = name.toUpperCase();
    if (r.method === 'PUT') {
      if (!/^[A-Z_][A-Z0-9_]*$/.test(upper) || upper.startsWith('GITHUB_'))
        return gh(
          422,
          'Secret names can only contain alphanumeric characters or underscores, must not start with a number or GITHUB_',
        );
      const b = jsonBody(r);
      if (typeof b?.encrypted_value !== 'string' || typeof b?.key_id !== 'string')
        return gh(422, 'Invalid request: encrypted_value and key_id are required');
      if (b.key_id !== this.keyId) return gh(422, 'Bad request - improperly encrypted secret (key_id)');
      let plain: Uint8Array;
      try {
        plain = sodium.crypto_box_seal_open(
          Buffer.from(b.encrypted_value, 'base64'),
          this.keyPair.publicKey,
          this.keyPair.privateKey,
        );
      } catch {
        return gh(422, 'Bad request - improperly encrypted secret');
      }
      if (plain.length > 48 * 1024) return gh(422, 'Secret value too large');
      const existed = scope.has(upper);
      scope.set(upper, Buffer.from(plain).toString('utf8'));
      this.secrets.set(env, scope);
      return existed ? { status: 204 } : { status: 201, json: {} };
    }
    if (r.method === 'DELETE') {
      if (!scope.delete(upper)) return gh(404, 'Not Found');
      return { status: 204 };
    }
    if (r.method === 'GET') {
      if (!scope.has(upper)) return gh(404, 'Not Found');
      return {
        status: 200,
        json: { name: upper, created_at: new Date().toISOString(), updated_at: new Date().toISOString() },
      };
    }
    return gh(404, 'Not Found');
  }
}
