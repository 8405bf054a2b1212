/**
 * A real, small OpenID Provider for the JWT/OIDC tests, on node:http + jose: discovery, JWKS (fetches
 * counted), RS256/PS256/ES256/ES384/EdDSA signing keys, tokens shaped like GitHub Actions' and GitLab's
 * ID tokens, and the authorization-code flow with PKCE. It checks what a real provider checks: the
 * client's credentials, the redirect URI, a single-use code bound to the PKCE challenge (S256 only).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWK, type KeyLike } from 'jose';

/** One signing key. */
interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyLike;
  publicJwk: JWK;
  publicPem: string;
}

/** A pending authorization (code -> what the token endpoint checks). */
interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string;
  sub: string;
  email: string;
  groups: string[];
  used: boolean;
}

/** The provider: start(), issuer URL, signing helpers, counters. */
export class OidcProvider {
  issuer = '';
  jwksFetches = 0;
  tokenRequests = 0;
  readonly keys: SigningKey[] = [];
  readonly clients = new Map<string, { secret: string; redirectUris: string[] }>();
  private server: Server | null = null;
  private readonly codes = new Map<string, Grant>();
  private readonly sessions = new Map<
    string,
    { clientId: string; redirectUri: string; state: string; nonce: string; challenge: string; method: string }
  >();

  /** Add a signing key published in the JWKS (kid defaults to alg-based). */
  async addKey(alg: string, kid = `${alg.toLowerCase()}-${this.keys.length + 1}`): Promise<SigningKey> {
    const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : undefined);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    const key = { kid, alg, privateKey, publicJwk, publicPem: await exportSPKI(publicKey) };
    this.keys.push(key);
    return key;
  }

  /** Listen on 127.0.0.1 (random port) with RS256, PS256, ES256, ES384 and EdDSA keys. */
  async start(): Promise<this> {
    for (const alg of ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA']) await this.addKey(alg);
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((e: unknown) => {
        res.writeHead(500).end(String(e));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    const addr = this.server.address() as { port: number };
    this.issuer = `http://127.0.0.1:${addr.port}`;
    return this;
  }

  /** Stop listening. */
  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }

  /** Sign `claims` with the key of `alg` (first such key unless `kid`). */
  async sign(
    claims: Record<string, unknown>,
    opts: { alg?: string; kid?: string; header?: Record<string, unknown> } = {},
  ): Promise<string> {
    const alg = opts.alg ?? 'RS256';
    const key = this.keys.find((k) => (opts.kid ? k.kid === opts.kid : k.alg === alg));
    if (!key) throw new Error(`no key for ${alg}`);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...opts.header })
      .sign(key.privateKey);
  }

  /** Claims shaped like a GitHub Actions OIDC token (docs.github.com/en/actions/reference/security/oidc). */
  githubClaims(over: Record<string, unknown> = {}, now = Math.floor(Date.now() / 1000)): Record<string, unknown> {
    return {
      jti: randomBytes(8).toString('hex'),
      sub: 'repo:octo-org/octo-repo:ref:refs/heads/main',
      aud: 'https://github.com/octo-org',
      ref: 'refs/heads/main',
      sha: 'd6ed1c1b7e3e2a3cbe9a0d2f7a3ee4bfe3c6b1c0',
      repository: 'octo-org/octo-repo',
      repository_owner: 'octo-org',
      repository_owner_id: '65',
      repository_id: '74',
      repository_visibility: 'private',
      run_id: '5555',
      run_number: '12',
      run_attempt: '1',
      actor: 'octocat',
      actor_id: '1',
      workflow: 'release',
      workflow_ref: 'octo-org/octo-repo/.github/workflows/release.yml@refs/heads/main',
      job_workflow_ref: 'octo-org/octo-repo/.github/workflows/release.yml@refs/heads/main',
      event_name: 'push',
      ref_type: 'branch',
      ref_protected: 'true',
      runner_environment: 'github-hosted',
      iss: this.issuer,
      nbf: now - 300,
      iat: now,
      exp: now + 300,
      ...over,
    };
  }

  /** Claims shaped like a GitLab CI `id_tokens` token (docs.gitlab.com/ci/secrets/id_token_authentication). */
  gitlabClaims(over: Record<string, unknown> = {}, now = Math.floor(Date.now() / 1000)): Record<string, unknown> {
    return {
      namespace_id: '72',
      namespace_path: 'my-group',
      project_id: '42',
      project_path: 'my-group/my-project',
      user_id: '7',
      user_login: 'sam',
      user_email: 'sam@example.com',
      pipeline_id: '1212',
      pipeline_source: 'push',
      job_id: '1313',
      ref: 'main',
      ref_type: 'branch',
      ref_protected: 'true',
      runner_id: 1,
      runner_environment: 'gitlab-hosted',
      sha: 'abc123',
      ci_config_ref_uri: 'gitlab.com/my-group/my-project//.gitlab-ci.yml@refs/heads/main',
      jti: randomBytes(8).toString('hex'),
      iss: this.issuer,
      iat: now,
      nbf: now - 5,
      exp: now + 3600,
      sub: 'project_path:my-group/my-project:ref_type:branch:ref:main',
      aud: 'https://keyhold.example',
      ...over,
    };
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }

  private async body(req: IncomingMessage): Promise<URLSearchParams> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return this.json(res, 200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: `${this.issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/jwks') {
      this.jwksFetches++;
      return this.json(res, 200, { keys: this.keys.map((k) => k.publicJwk) });
    }
    if (url.pathname === '/authorize' && req.method === 'GET') {
      const q = url.searchParams;
      const client = this.clients.get(q.get('client_id') ?? '');
      const redirectUri = q.get('redirect_uri') ?? '';
      if (!client || !client.redirectUris.includes(redirectUri))
        return this.json(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' });
      if (q.get('response_type') !== 'code' || !q.get('scope')?.split(' ').includes('openid'))
        return this.json(res, 400, { error: 'invalid_request' });
      if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
        return this.json(res, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' });
      const session = randomBytes(12).toString('hex');
      this.sessions.set(session, {
        clientId: q.get('client_id')!,
        redirectUri,
        state: q.get('state') ?? '',
        nonce: q.get('nonce') ?? '',
        challenge: q.get('code_challenge')!,
        method: 'S256',
      });
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<form method="post" action="/login"><input type="hidden" name="session" value="${session}"><input name="username"><input name="password" type="password"><button>Sign in</button></form>`,
        );
      return;
    }
    if (url.pathname === '/login' && req.method === 'POST') {
      const f = await this.body(req);
      const s = this.sessions.get(f.get('session') ?? '');
      if (!s) return this.json(res, 400, { error: 'unknown session' });
      this.sessions.delete(f.get('session')!);
      if (f.get('password') !== 'correct horse') {
        res.writeHead(401, { 'content-type': 'text/html' }).end('wrong password');
        return;
      }
      const user = f.get('username') ?? '';
      const code = randomBytes(16).toString('hex');
      this.codes.set(code, {
        clientId: s.clientId,
        redirectUri: s.redirectUri,
        challenge: s.challenge,
        nonce: s.nonce,
        sub: `user-${user}`,
        email: `${user}@example.com`,
        groups: ['engineering', 'oncall'],
        used: false,
      });
      const back = new URL(s.redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', s.state);
      res.writeHead(302, { location: back.toString() }).end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      this.tokenRequests++;
      const f = await this.body(req);
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
      const [id, secret] = basic
        ? Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map(decodeURIComponent)
        : [f.get('client_id'), f.get('client_secret')];
      const client = this.clients.get(id ?? '');
      if (!client || client.secret !== secret) return this.json(res, 401, { error: 'invalid_client' });
      const g = this.codes.get(f.get('code') ?? '');
      if (!g || g.used || g.clientId !== id) return this.json(res, 400, { error: 'invalid_grant' });
      g.used = true;
      if (f.get('grant_type') !== 'authorization_code' || f.get('redirect_uri') !== g.redirectUri)
        return this.json(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
      const verifier = f.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== g.challenge)
        return this.json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      const now = Math.floor(Date.now() / 1000);
      const idToken = await this.sign(
        {
          iss: this.issuer,
          sub: g.sub,
          aud: id,
          email: g.email,
          groups: g.groups,
          nonce: g.nonce,
          iat: now,
          exp: now + 300,
        },
        { alg: 'RS256' },
      );
      return this.json(res, 200, {
        access_token: randomBytes(16).toString('hex'),
        token_type: 'Bearer',
        expires_in: 300,
        id_token: idToken,
      });
    }
    this.json(res, 404, { error: 'not found' });
  }
}
