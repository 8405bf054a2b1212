/**
 * JWT/OIDC login against a real local OpenID Provider (test/fakes/oidc-provider.ts): GitHub Actions and
 * GitLab shaped tokens, every supported algorithm, JWKS caching, Vault's refusals (each audited), a
 * replay of what hashicorp/vault-action sends, and the OIDC browser flow played end to end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';
import { OidcProvider } from '../../fakes/oidc-provider.js';

let d: Harness;
let op: OidcProvider;
let auditFile: string;

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  op = await new OidcProvider().start();
  d = await startHarness();
  auditFile = join(d.dir, 'audit.log');
  await must('PUT', 'sys/audit/file', { type: 'file', options: { file_path: auditFile } });
  await must('POST', 'sys/auth/jwt', { type: 'jwt', description: 'CI identity tokens' });
  await must('POST', 'auth/jwt/config', {
    oidc_discovery_url: op.issuer,
    bound_issuer: op.issuer,
    default_role: 'gh-deploy',
  });
  await must('PUT', 'sys/policies/acl/sign-only', {
    policy: 'path "transit/sign/release" { capabilities = ["update"] }',
  });
  await must('POST', 'auth/jwt/role/gh-deploy', {
    role_type: 'jwt',
    user_claim: 'repository',
    bound_audiences: ['https://github.com/octo-org'],
    bound_claims_type: 'glob',
    bound_claims: {
      sub: 'repo:octo-org/octo-repo:ref:refs/heads/*',
      repository: 'octo-org/octo-repo',
      ref: 'refs/heads/main',
    },
    claim_mappings: { repository: 'repository', ref: 'ref', job_workflow_ref: 'workflow' },
    token_policies: ['sign-only'],
    token_ttl: '10m',
    token_max_ttl: '30m',
  });
}, 60_000);

afterAll(async () => {
  await d?.stop();
  await op?.stop();
  if (d) cleanup(d.dir);
});

describe('JWT login with GitHub Actions tokens', () => {
  it('issues a token with the auth block exactly as Vault shapes it, metadata from claim_mappings, and an entity', async () => {
    const jwt = await op.sign(op.githubClaims());
    const r = await d.req('POST', 'auth/jwt/login', { role: 'gh-deploy', jwt }, { token: null });
    expect(r.status, r.text).toBe(200);
    const a = r.body.auth;
    expect(Object.keys(a).sort()).toEqual(
      [
        'accessor',
        'client_token',
        'entity_id',
        'lease_duration',
        'metadata',
        'mfa_requirement',
        'num_uses',
        'orphan',
        'policies',
        'renewable',
        'token_policies',
        'token_type',
      ].sort(),
    );
    expect(a).toMatchObject({
      policies: ['default', 'sign-only'],
      token_policies: ['default', 'sign-only'],
      lease_duration: 600,
      renewable: true,
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    });
    expect(a.metadata).toEqual({
      repository: 'octo-org/octo-repo',
      ref: 'refs/heads/main',
      workflow: 'octo-org/octo-repo/.github/workflows/release.yml@refs/heads/main',
      role: 'gh-deploy',
    });
    expect(a.client_token).toMatch(/^hvs\./);
    const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: a.client_token });
    expect(look.body.data).toMatchObject({
      path: 'auth/jwt/login',
      display_name: 'jwt-octo-org/octo-repo',
      entity_id: a.entity_id,
      orphan: true,
      role: 'gh-deploy',
    });
    const entity = await must('GET', `identity/entity/id/${a.entity_id}`, undefined, 200);
    const mounts = await must('GET', 'sys/auth', undefined, 200);
    const accessor = mounts.body.data['jwt/'].accessor;
    expect(accessor).toMatch(/^auth_jwt_[0-9a-f]{8}$/);
    expect(entity.body.data.aliases[0]).toMatchObject({
      name: 'octo-org/octo-repo',
      mount_accessor: accessor,
      mount_type: 'jwt',
      metadata: { repository: 'octo-org/octo-repo', ref: 'refs/heads/main' },
    });
    // The same repository logs in again: same entity.
    const again = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gh-deploy', jwt: await op.sign(op.githubClaims()) },
      { token: null },
    );
    expect(again.body.auth.entity_id).toBe(a.entity_id);
    const found = await must(
      'POST',
      'identity/lookup/entity',
      { alias_name: 'octo-org/octo-repo', alias_mount_accessor: accessor },
      200,
    );
    expect(found.body.data.id).toBe(a.entity_id);
    // The token may sign and nothing else.
    const other = await d.req('GET', 'sys/mounts', undefined, { token: a.client_token });
    expect(other.status).toBe(403);
  });

  it.each(['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'])('accepts a token signed with %s', async (alg) => {
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gh-deploy', jwt: await op.sign(op.githubClaims(), { alg }) },
      { token: null },
    );
    expect(r.status, r.text).toBe(200);
  });

  it('a role with token_type=batch issues a batch token that signs, with the same entity and metadata', async () => {
    await must('POST', 'auth/jwt/role/gh-batch', {
      role_type: 'jwt',
      user_claim: 'repository',
      bound_audiences: ['https://github.com/octo-org'],
      bound_claims: { repository: 'octo-org/octo-repo' },
      claim_mappings: { ref: 'ref' },
      token_policies: ['sign-only'],
      token_ttl: '5m',
      token_type: 'batch',
    });
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gh-batch', jwt: await op.sign(op.githubClaims()) },
      { token: null },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth).toMatchObject({
      token_type: 'batch',
      accessor: '',
      renewable: false,
      lease_duration: 300,
      metadata: { ref: 'refs/heads/main', role: 'gh-batch' },
    });
    expect(r.body.auth.client_token).toMatch(/^hvb\./);
    const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: r.body.auth.client_token });
    expect(look.body.data).toMatchObject({
      type: 'batch',
      path: 'auth/jwt/login',
      role: 'gh-batch',
      entity_id: r.body.auth.entity_id,
      meta: { ref: 'refs/heads/main', role: 'gh-batch' },
    });
    expect((await d.req('GET', 'sys/mounts', undefined, { token: r.body.auth.client_token })).status).toBe(403);
  });

  it('fetched the JWKS once for all those logins (cached per key)', () => {
    expect(op.jwksFetches).toBe(1);
  });

  it('replays what hashicorp/vault-action sends: {"jwt","role":""} to v1/auth/jwt/login, the default role applies', async () => {
    // vault-action src/auth.js: POST `${vaultUrl}/v1/auth/${path}/login` with JSON {jwt, role} and
    // a stale X-Vault-Token is never sent; an empty role input falls back to default_role.
    const jwt = await op.sign(op.githubClaims());
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { jwt, role: '' },
      { token: null, headers: { 'Content-Type': 'application/json' } },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.client_token).toBeTruthy();
    // A stale token sent to a login path does not break the login.
    const stale = await d.req(
      'POST',
      'auth/jwt/login',
      { jwt: await op.sign(op.githubClaims()), role: 'gh-deploy' },
      { token: 'hvs.stale-token-from-env' },
    );
    expect(stale.status, stale.text).toBe(200);
  });

  it('refetches the JWKS when a token names an unknown kid (a rotated key), at most once per cooldown', async () => {
    await new Promise((r) => setTimeout(r, 5200)); // past the 5 s refetch cooldown of the first fetch
    const key = await op.addKey('RS256', 'rotated-1');
    const before = op.jwksFetches;
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gh-deploy', jwt: await op.sign(op.githubClaims(), { kid: key.kid }) },
      { token: null },
    );
    expect(r.status, r.text).toBe(200);
    expect(op.jwksFetches).toBe(before + 1);
    // A burst of tokens naming kids nobody published: refused, and no fetch storm.
    const forged = await Promise.all(
      Array.from({ length: 20 }, async (_, i) =>
        d.req(
          'POST',
          'auth/jwt/login',
          {
            role: 'gh-deploy',
            jwt: await op.sign(op.githubClaims(), { kid: key.kid, header: { kid: `forged-${i}` } }),
          },
          { token: null },
        ),
      ),
    );
    for (const f of forged) expect(f.status).toBe(400);
    expect(op.jwksFetches).toBeLessThanOrEqual(before + 2);
  }, 20_000);
});

describe('hashicorp/vault-action replay (src/auth.js)', () => {
  it('self-signed jwtPrivateKey variant: RS256 without kid, iss "vault-action", verified with jwt_validation_pubkeys; then reads a KV v2 secret', async () => {
    const { generateKeyPairSync, createSign } = await import('node:crypto');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await must('POST', 'sys/auth/vault-action', { type: 'jwt' });
    await must('POST', 'auth/vault-action/config', {
      jwt_validation_pubkeys: [publicKey.export({ type: 'spki', format: 'pem' })],
      bound_issuer: 'vault-action',
    });
    await must('POST', 'auth/vault-action/role/gh', {
      role_type: 'jwt',
      user_claim: 'repository',
      bound_claims: { repository: 'octo-org/octo-repo' },
      token_policies: 'sign-only,app-read',
    });
    await must('PUT', 'sys/policies/acl/app-read', { policy: 'path "secret/data/app/*" { capabilities = ["read"] }' });
    await must('POST', 'secret/data/app/db', { data: { password: 'from-keyhold' } }, 200);
    // generateJwt(): header {alg, typ}, payload iss/iat(now-60)/nbf/exp(now+3600)/event/workflow/sha/actor/repository/ref, signed by jsrsasign (RS256).
    const now = Math.floor(Date.now() / 1000);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const head = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iss: 'vault-action', iat: now - 60, nbf: now, exp: now + 3600, event: 'push', workflow: 'release', sha: 'abc', actor: 'octocat', repository: 'octo-org/octo-repo', ref: 'refs/heads/main' })}`;
    const jwt = `${head}.${createSign('RSA-SHA256').update(head).sign(privateKey).toString('base64url')}`;
    // getClientToken(): got.post(`v1/auth/${path}/login`, { json: { jwt, role } }).
    const r = await d.req(
      'POST',
      'auth/vault-action/login',
      { jwt, role: 'gh' },
      { token: null, headers: { 'user-agent': 'got (https://github.com/sindresorhus/got)' } },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.client_token).toBeTruthy();
    expect(r.body.auth.policies).toEqual(['app-read', 'default', 'sign-only']);
    // secrets.js: GET v1/<path> with X-Vault-Token; data.data present means KV v2.
    const secret = await d.req('GET', 'secret/data/app/db', undefined, { token: r.body.auth.client_token });
    expect(secret.body.data.data).toEqual({ password: 'from-keyhold' });
  });

  it('approle variant with the secretId input unset sends secret_id "" and gets "missing secret_id"', async () => {
    await must('POST', 'sys/auth/approle', { type: 'approle' });
    await must('POST', 'auth/approle/role/ci', { token_policies: 'sign-only' });
    const rid = (await must('GET', 'auth/approle/role/ci/role-id', undefined, 200)).body.data.role_id;
    const r = await d.req('POST', 'auth/approle/login', { role_id: rid, secret_id: '' }, { token: null });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing secret_id']);
  });
});

describe("templated policies resolve against the login's entity", () => {
  it('one policy serves every repository: {{identity.entity.aliases.<accessor>.metadata.repository}}', async () => {
    const accessor = (await must('GET', 'sys/auth', undefined, 200)).body.data['jwt/'].accessor;
    await must('PUT', 'sys/policies/acl/per-repo', {
      policy: `path "secret/data/{{identity.entity.aliases.${accessor}.metadata.repository}}/*" { capabilities = ["read"] }`,
    });
    await must('POST', 'auth/jwt/role/any-repo', {
      role_type: 'jwt',
      user_claim: 'repository',
      bound_audiences: 'https://github.com/octo-org',
      bound_claims_type: 'glob',
      bound_claims: { repository: 'octo-org/*' },
      claim_mappings: { repository: 'repository' },
      token_policies: 'per-repo',
    });
    await must('POST', 'secret/data/octo-org/app-a/db', { data: { p: 'a' } }, 200);
    await must('POST', 'secret/data/octo-org/app-b/db', { data: { p: 'b' } }, 200);
    const login = async (repo: string) =>
      (
        await d.req(
          'POST',
          'auth/jwt/login',
          {
            role: 'any-repo',
            jwt: await op.sign(op.githubClaims({ repository: repo, sub: `repo:${repo}:ref:refs/heads/main` })),
          },
          { token: null },
        )
      ).body.auth.client_token as string;
    const a = await login('octo-org/app-a');
    const b = await login('octo-org/app-b');
    expect((await d.req('GET', 'secret/data/octo-org/app-a/db', undefined, { token: a })).body.data.data).toEqual({
      p: 'a',
    });
    expect((await d.req('GET', 'secret/data/octo-org/app-b/db', undefined, { token: a })).status).toBe(403);
    expect((await d.req('GET', 'secret/data/octo-org/app-b/db', undefined, { token: b })).body.data.data).toEqual({
      p: 'b',
    });
    expect((await d.req('GET', 'secret/data/octo-org/app-a/db', undefined, { token: b })).status).toBe(403);
  });
});

describe('GitLab CI tokens', () => {
  it('logs in with bound project_id/ref_protected claims and user_claim user_email', async () => {
    await must('POST', 'auth/jwt/role/gitlab', {
      role_type: 'jwt',
      user_claim: 'user_email',
      bound_audiences: 'https://keyhold.example',
      bound_claims: { project_id: '42', ref_protected: 'true', ref_type: 'branch' },
      token_policies: 'sign-only',
    });
    const ok = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gitlab', jwt: await op.sign(op.gitlabClaims(), { alg: 'ES256' }) },
      { token: null },
    );
    expect(ok.status, ok.text).toBe(200);
    const other = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'gitlab', jwt: await op.sign(op.gitlabClaims({ project_id: '43' })) },
      { token: null },
    );
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual([
      'error validating claims: claim "project_id" does not match any associated bound claim values',
    ]);
  });
});

describe('bad input: Vault status and message, audited, nothing issued', () => {
  const now = () => Math.floor(Date.now() / 1000);
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const cases: Array<[string, () => Promise<Record<string, unknown>>, number, string]> = [
    [
      'expired',
      async () => ({
        role: 'gh-deploy',
        jwt: await op.sign(op.githubClaims({ iat: now() - 4000, nbf: now() - 4000, exp: now() - 3600 })),
      }),
      400,
      'error validating token: invalid expiration time (exp) claim: token is expired',
    ],
    [
      'not yet valid',
      async () => ({ role: 'gh-deploy', jwt: await op.sign(op.githubClaims({ nbf: now() + 3600, iat: now() })) }),
      400,
      'error validating token: invalid not before (nbf) claim: token not yet valid',
    ],
    [
      'issued in the future',
      async () => ({
        role: 'gh-deploy',
        jwt: await op.sign(op.githubClaims({ nbf: now(), iat: now() + 3600, exp: now() + 7200 })),
      }),
      400,
      'error validating token: invalid issued at (iat) claim: token issued in the future',
    ],
    [
      'wrong audience',
      async () => ({ role: 'gh-deploy', jwt: await op.sign(op.githubClaims({ aud: 'https://github.com/evil-org' })) }),
      400,
      'error validating token: invalid audience (aud) claim: audience claim does not match any expected audience',
    ],
    [
      'wrong issuer',
      async () => ({ role: 'gh-deploy', jwt: await op.sign(op.githubClaims({ iss: 'https://evil.example' })) }),
      400,
      'error validating token: invalid issuer (iss) claim',
    ],
    [
      'unsigned (alg none)',
      async () => ({ role: 'gh-deploy', jwt: `${b64({ alg: 'none', typ: 'JWT' })}.${b64(op.githubClaims())}.` }),
      400,
      'error validating token: invalid algorithm (alg) header parameter: token signed with unexpected algorithm',
    ],
    [
      'HS256 keyed with the public key',
      async () => {
        const { createHmac } = await import('node:crypto');
        const head = `${b64({ alg: 'HS256', typ: 'JWT', kid: op.keys[0]!.kid })}.${b64(op.githubClaims())}`;
        return {
          role: 'gh-deploy',
          jwt: `${head}.${createHmac('sha256', op.keys[0]!.publicPem).update(head).digest('base64url')}`,
        };
      },
      400,
      'error validating token: invalid algorithm (alg) header parameter: token signed with unexpected algorithm',
    ],
    [
      'oversized (> 64 KiB)',
      async () => ({ role: 'gh-deploy', jwt: await op.sign(op.githubClaims({ padding: 'x'.repeat(70_000) })) }),
      400,
      'error validating token: token is larger than 65536 bytes',
    ],
    [
      'malformed',
      async () => ({ role: 'gh-deploy', jwt: 'not.a.jwt!' }),
      400,
      'error validating token: malformed token: expected three base64url parts separated by "."',
    ],
    [
      'bad signature',
      async () => ({ role: 'gh-deploy', jwt: (await op.sign(op.githubClaims())).replace(/.{4}$/, 'AAAA') }),
      400,
      'error validating token: error verifying token signature: no known key successfully validated the token signature',
    ],
    [
      'unknown role',
      async () => ({ role: 'nope', jwt: await op.sign(op.githubClaims()) }),
      400,
      'role "nope" could not be found',
    ],
    ['missing token', async () => ({ role: 'gh-deploy' }), 400, 'missing token'],
  ];
  it.each(cases)('%s', async (_name, body, status, message) => {
    const r = await d.req('POST', 'auth/jwt/login', await body(), { token: null });
    expect(r.status, r.text).toBe(status);
    expect(r.body.errors).toEqual([message]);
    expect(r.body.auth).toBeUndefined();
  });

  it('audits every refused login with its error, and never logs the JWT itself', async () => {
    const jwt = await op.sign(op.githubClaims({ aud: 'https://github.com/evil-org' }));
    await d.req('POST', 'auth/jwt/login', { role: 'gh-deploy', jwt }, { token: null });
    await new Promise((r) => setTimeout(r, 200));
    const lines = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const failures = lines.filter((l) => l.type === 'response' && l.request?.path === 'auth/jwt/login' && l.error);
    expect(failures.length).toBeGreaterThanOrEqual(cases.length);
    expect(failures.some((l) => String(l.error).includes('audience claim does not match'))).toBe(true);
    const text = readFileSync(auditFile, 'utf8');
    expect(text).not.toContain(jwt);
    // Issued tokens are HMACed in login responses.
    const ok = lines.find(
      (l) => l.type === 'response' && l.request?.path === 'auth/jwt/login' && l.response?.auth?.client_token,
    );
    expect(ok.response.auth.client_token).toMatch(/^hmac-sha256:/);
    expect(ok.response.mount_type).toBe('jwt');
  });

  it('refuses an oidc-type role at login, and a role without bound constraints at write', async () => {
    await must('POST', 'auth/jwt/role/browser', {
      user_claim: 'sub',
      allowed_redirect_uris: 'http://localhost:8250/oidc/callback',
    });
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'browser', jwt: await op.sign(op.githubClaims()) },
      { token: null },
    );
    expect(r.body.errors).toEqual(['role with oidc role_type is not allowed']);
    const w = await d.req('POST', 'auth/jwt/role/loose', { role_type: 'jwt', user_claim: 'sub' });
    expect(w.status).toBe(400);
    expect(w.body.errors).toEqual(['must have at least one bound constraint when creating/updating a role']);
  });

  it('refuses a token with aud on a role without bound_audiences (Vault 1.16.3+)', async () => {
    await must('POST', 'auth/jwt/role/noaud', {
      role_type: 'jwt',
      user_claim: 'repository',
      bound_subject: 'repo:octo-org/octo-repo:ref:refs/heads/main',
    });
    const r = await d.req(
      'POST',
      'auth/jwt/login',
      { role: 'noaud', jwt: await op.sign(op.githubClaims()) },
      { token: null },
    );
    expect(r.body.errors).toEqual(['audience claim found in JWT but no audiences bound to the role']);
  });
});

/** GET a URL without following redirects. */
function get(
  url: string,
  opts: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; location?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const r = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          location: res.headers.location,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    r.on('error', reject);
    r.end(opts.body);
  });
}

describe('OIDC browser flow (the test plays the browser)', () => {
  const redirect = 'http://localhost:8250/oidc/callback';
  beforeAll(async () => {
    op.clients.set('keyhold', { secret: 'client-secret-1', redirectUris: [redirect] });
    await must('POST', 'sys/auth/oidc', { type: 'oidc' });
    await must('POST', 'auth/oidc/config', {
      oidc_discovery_url: op.issuer,
      oidc_client_id: 'keyhold',
      oidc_client_secret: 'client-secret-1',
      default_role: 'people',
    });
    await must('POST', 'auth/oidc/role/people', {
      user_claim: 'email',
      groups_claim: 'groups',
      allowed_redirect_uris: [redirect],
      token_policies: 'sign-only',
      claim_mappings: { email: 'email' },
    });
  });

  async function authorize(clientNonce?: string, redirectUri = redirect): Promise<URL> {
    const r = await d.req(
      'POST',
      'auth/oidc/oidc/auth_url',
      { role: 'people', redirect_uri: redirectUri, ...(clientNonce ? { client_nonce: clientNonce } : {}) },
      { token: null },
    );
    expect(r.status, r.text).toBe(200);
    const authUrl = new URL(r.body.data.auth_url);
    expect(authUrl.origin).toBe(op.issuer);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('state')).toMatch(/^st_/);
    expect(authUrl.searchParams.get('nonce')).toMatch(/^n_/);
    return authUrl;
  }

  it('follows auth_url, posts the login, lands on the callback and gets a token (PKCE, state, nonce checked)', async () => {
    const authUrl = await authorize('cn-1234567890abcdefgh');
    const page = await get(authUrl.toString());
    expect(page.status, page.text).toBe(200);
    const session = /name="session" value="([^"]+)"/.exec(page.text)![1]!;
    const posted = await get(`${op.issuer}/login`, {
      method: 'POST',
      body: `session=${session}&username=sam&password=correct+horse`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(posted.status).toBe(302);
    const back = new URL(posted.location!);
    expect(back.searchParams.get('state')).toBe(authUrl.searchParams.get('state'));
    const q = new URLSearchParams({
      state: back.searchParams.get('state')!,
      code: back.searchParams.get('code')!,
      client_nonce: 'cn-1234567890abcdefgh',
    });
    const cb = await d.req('GET', `auth/oidc/oidc/callback?${q}`, undefined, { token: null });
    expect(cb.status, cb.text).toBe(200);
    expect(cb.body.auth).toMatchObject({
      policies: ['default', 'sign-only'],
      metadata: { email: 'sam@example.com', role: 'people' },
      renewable: true,
    });
    // The state is single-use.
    const replay = await d.req('GET', `auth/oidc/oidc/callback?${q}`, undefined, { token: null });
    expect(replay.status).toBe(400);
    expect(replay.body.errors).toEqual(['Expired or missing OAuth state.']);
  });

  it('refuses a callback without the client_nonce given to auth_url, and an unlisted redirect URI gets auth_url ""', async () => {
    const authUrl = await authorize('cn-abcdefghij0123456789');
    const cb = await d.req(
      'GET',
      `auth/oidc/oidc/callback?state=${authUrl.searchParams.get('state')}&code=whatever&client_nonce=other`,
      undefined,
      { token: null },
    );
    expect(cb.body.errors).toEqual(['invalid client_nonce']);
    const r = await d.req(
      'POST',
      'auth/oidc/oidc/auth_url',
      { role: 'people', redirect_uri: 'https://evil.example/cb' },
      { token: null },
    );
    expect(r.status).toBe(200);
    expect(r.body.data.auth_url).toBe('');
    // Loopback redirect URIs match whatever their port, as in Vault (the CLI may pick another port).
    const other = await authorize(undefined, 'http://localhost:51234/oidc/callback');
    expect(other.searchParams.get('redirect_uri')).toBe('http://localhost:51234/oidc/callback');
  });
});
