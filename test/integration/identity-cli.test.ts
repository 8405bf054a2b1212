/**
 * The identity CLI forms, exactly as written in issue 14: `keyhold auth enable|list|tune|disable`,
 * `keyhold login -method=approle role_id=... secret_id=-`, `-method=jwt role=ci jwt=@FILE` and `jwt=-`,
 * `-method=oidc` (the test plays the browser against a real local provider), and
 * `keyhold token create -role=NAME -period=24h -orphan`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { OidcProvider } from '../fakes/oidc-provider.js';

let d: Daemon;
let op: OidcProvider;

beforeAll(async () => {
  op = await new OidcProvider().start();
  d = await startDaemon();
  await d.req('PUT', 'sys/policies/acl/sign-only', {
    policy: 'path "transit/sign/release" { capabilities = ["update"] }',
  });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  await op?.stop();
  if (d) cleanup(d.dir);
});

describe('keyhold auth', () => {
  it('enables, lists, tunes and disables with single-dash vault-style flags', async () => {
    const en = await d.cli(['auth', 'enable', '-path=svc', '-description=services', 'approle']);
    expect(en.exitCode, en.stderr).toBe(0);
    expect(en.stderr).toBe('Success! Enabled approle auth method at: svc/');
    const list = await d.cli(['auth', 'list']);
    expect(list.stdout).toMatch(/svc\/\s+approle\s+auth_approle_[0-9a-f]{8}\s+services/);
    expect(list.stdout).toMatch(/token\/\s+token\s+auth_token_[0-9a-f]{8}/);
    const tune = await d.cli(['auth', 'tune', '-default-lease-ttl=1h', '-max-lease-ttl=2h', 'svc']);
    expect(tune.exitCode, tune.stderr).toBe(0);
    expect((await d.req('GET', 'sys/auth/svc/tune')).body.data).toMatchObject({
      default_lease_ttl: 3600,
      max_lease_ttl: 7200,
    });
    expect((await d.cli(['auth', 'disable', 'svc'])).exitCode).toBe(0);
    expect((await d.req('GET', 'sys/auth')).body.data['svc/']).toBeUndefined();
  });
});

describe('keyhold login', () => {
  it('-method=approle role_id=... secret_id=- reads the secret id from stdin and saves the token', async () => {
    await d.cli(['auth', 'enable', 'approle']);
    await d.req('POST', 'auth/approle/role/ci', { token_policies: 'sign-only' });
    const rid = (await d.req('GET', 'auth/approle/role/ci/role-id')).body.data.role_id;
    const sid = (await d.req('POST', 'auth/approle/role/ci/secret-id', {})).body.data.secret_id;
    const r = await d.cli(['login', '-method=approle', `role_id=${rid}`, 'secret_id=-'], { input: sid + '\n' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Success! You are now authenticated/);
    expect(r.stdout).toMatch(/token_policies\s+\[default sign-only\]/);
    expect(r.stdout).not.toContain(sid);
    const saved = readFileSync(join(d.dir, 'token'), 'utf8').trim();
    expect(saved).toMatch(/^hvs\./);
    const self = await d.req('GET', 'auth/token/lookup-self', undefined, { token: saved });
    expect(self.body.data.path).toBe('auth/approle/login');
    const bad = await d.cli(['login', '-method=approle', `role_id=${rid}`, 'secret_id=-'], { input: 'wrong' });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('invalid role or secret ID');
  });

  it('-method=jwt role=ci jwt=@FILE and jwt=- log in with a CI token', async () => {
    await d.req('POST', 'sys/auth/jwt', { type: 'jwt' });
    await d.req('POST', 'auth/jwt/config', { oidc_discovery_url: op.issuer, bound_issuer: op.issuer });
    await d.req('POST', 'auth/jwt/role/ci', {
      role_type: 'jwt',
      user_claim: 'repository',
      bound_audiences: 'https://github.com/octo-org',
      bound_claims: { repository: 'octo-org/octo-repo', ref: 'refs/heads/main' },
      token_policies: 'sign-only',
    });
    const file = join(d.dir, 'id-token.jwt');
    writeFileSync(file, (await op.sign(op.githubClaims())) + '\n');
    const a = await d.cli(['login', '-method=jwt', 'role=ci', `jwt=@${file}`]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/token_meta_role\s+ci/);
    const b = await d.cli(['login', '-method=jwt', 'role=ci', 'jwt=-', '--format', 'json'], {
      input: await op.sign(op.githubClaims(), { alg: 'EdDSA' }),
    });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(JSON.parse(b.stdout).auth.token_policies).toEqual(['default', 'sign-only']); // the vault envelope (issue 34 item 1)
  });

  it('-method=oidc skip_browser=true prints the URL, listens on localhost, and completes when the provider redirects back', async () => {
    const port = 18250 + (process.pid % 500);
    const redirect = `http://localhost:${port}/oidc/callback`;
    op.clients.set('cli', { secret: 'cli-secret', redirectUris: [redirect] });
    await d.req('POST', 'sys/auth/oidc', { type: 'oidc' });
    await d.req('POST', 'auth/oidc/config', {
      oidc_discovery_url: op.issuer,
      oidc_client_id: 'cli',
      oidc_client_secret: 'cli-secret',
      default_role: 'people',
    });
    await d.req('POST', 'auth/oidc/role/people', {
      user_claim: 'email',
      allowed_redirect_uris: 'http://localhost:8250/oidc/callback',
      token_policies: 'sign-only',
    });
    const proc = execa(process.execPath, [BIN, 'login', '-method=oidc', `port=${port}`, 'skip_browser=true'], {
      env: { KEYHOLD_HOME: d.dir, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: undefined, NO_COLOR: '1' },
      reject: false,
      timeout: 30_000,
    });
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      proc.stderr!.on('data', (c: Buffer) => {
        err += c.toString();
        const m = /\n\s+(http:\/\/\S+)\n/.exec(err);
        if (m) resolve(m[1]!);
      });
      proc.on('exit', () => reject(new Error(`login exited early: ${err}`)));
    });
    expect(err).toContain('Complete the login via your OIDC provider.');
    // The browser: open the authorize page, post the login, follow the redirect to the CLI's listener.
    const http = (u: string, method = 'GET', body?: string) =>
      new Promise<{ status: number; location?: string; text: string }>((resolve, reject) => {
        const r = request(
          u,
          { method, headers: body ? { 'content-type': 'application/x-www-form-urlencoded' } : {} },
          (res) => {
            let t = '';
            res.on('data', (c: Buffer) => (t += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, text: t }));
          },
        );
        r.on('error', reject);
        r.end(body);
      });
    const page = await http(url);
    const session = /name="session" value="([^"]+)"/.exec(page.text)![1]!;
    const posted = await http(`${op.issuer}/login`, 'POST', `session=${session}&username=ana&password=correct+horse`);
    expect(posted.location).toMatch(new RegExp(`^http://localhost:${port}/oidc/callback\\?`));
    const landed = await http(posted.location!);
    expect(landed.status).toBe(200);
    expect(landed.text).toContain('Signed in to keyhold');
    const r = await proc;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toMatch(/token_policies\s+\[default sign-only\]/);
    const saved = readFileSync(join(d.dir, 'token'), 'utf8').trim();
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: saved })).body.data.display_name).toBe(
      'oidc-ana@example.com',
    );
  }, 40_000);
});

describe('keyhold token create', () => {
  it('-role=NAME -period=24h -orphan creates a periodic orphan token through the role', async () => {
    await d.req('POST', 'auth/token/roles/deployer', { allowed_policies: 'sign-only' });
    const r = await d.cli(['token', 'create', '-role=deployer', '-period=24h', '-orphan', '--format', 'json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout).auth; // the vault envelope (issue 34 item 1)
    expect(out.lease_duration).toBe(86400);
    const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: out.client_token });
    expect(look.body.data).toMatchObject({
      orphan: true,
      period: 86400,
      role: 'deployer',
      policies: ['default', 'sign-only'],
    });
  });
});
