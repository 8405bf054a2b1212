/**
 * `keyhold login` for people (issue 29): -method=userpass with the password from stdin or a file
 * (never argv), -method=github with token=- against the strict GitHub fake, and the MFA step (the
 * passcode asked for after the login answers mfa_requirement), on a real daemon.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GithubApiFake } from '../fakes/github-api.js';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
let gh: GithubApiFake;

let hasOathtool = true;
try {
  execFileSync('oathtool', ['--version'], { stdio: 'ignore' });
} catch {
  hasOathtool = false;
  console.warn('people-cli: oathtool is not installed (scripts/setup-test-env.sh installs it); skipping the MFA login');
}

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  d = await startDaemon();
  gh = await new GithubApiFake().start();
  await must('POST', 'sys/auth/userpass', { type: 'userpass' });
  await must('POST', 'auth/userpass/users/alice', { password: 'correct horse battery', policies: 'dev' });
}, 60_000);
afterAll(async () => {
  await d?.stop();
  await gh?.stop();
  if (d) cleanup(d.dir);
});

describe('keyhold login -method=userpass', () => {
  it('reads password=- from stdin, saves the token, and the next command uses it', async () => {
    const r = await d.cli(['login', '-method=userpass', 'username=alice', 'password=-'], {
      input: 'correct horse battery\n',
      token: null,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/Success! You are now authenticated/);
    expect(r.stdout).toMatch(/token_policies\s+\[default dev\]/);
    const self = await d.cli(['token', 'lookup', '-format=json'], { token: null });
    expect(self.exitCode, self.stderr).toBe(0);
    expect(JSON.parse(self.stdout).data.display_name).toBe('userpass-alice'); // the vault envelope (issue 34 item 1)
  });

  it('reads the password from piped stdin when none is given (the prompt on a terminal)', async () => {
    const r = await d.cli(['login', '-method=userpass', 'username=alice', '-no-store', '-format=json'], {
      input: 'correct horse battery\n',
      token: null,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).auth.client_token).toMatch(/^hvs\./); // the vault envelope (issue 34 item 1)
  });

  it('refuses a password on the command line without sending it anywhere', async () => {
    const before = (await d.req('GET', 'sys/health')).status;
    const r = await d.cli(['login', '-method=userpass', 'username=alice', 'password=correct horse battery'], {
      token: null,
    });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/password must not be given on the command line/);
    expect(before).toBe(200);
  });

  it("a wrong password exits 2 with Vault's message", async () => {
    const r = await d.cli(['login', '-method=userpass', 'username=alice', 'password=-'], {
      input: 'nope\n',
      token: null,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/invalid username or password/);
  });
});

describe('keyhold login -method=github', () => {
  it('reads token=- from stdin and logs in a member of the organization', async () => {
    const org = gh.org('acme');
    const u = gh.user('octo', { orgs: [org], teams: [{ name: 'core', org }] });
    await must('POST', 'sys/auth/github', { type: 'github' });
    await must('POST', 'auth/github/config', { organization: 'acme', base_url: gh.url });
    await must('POST', 'auth/github/map/teams/core', { value: 'core-team' });
    const r = await d.cli(['login', '-method=github', 'token=-', '-no-store', '-format=json'], {
      input: `${u.token}\n`,
      token: null,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).auth.token_policies).toEqual(['core-team', 'default']); // the vault envelope (issue 34 item 1)
    const argv = await d.cli(['login', '-method=github', `token=${u.token}`], { token: null });
    expect(argv.exitCode).toBe(1);
    expect(argv.stderr).not.toContain(u.token);
  });
});

describe.skipIf(!hasOathtool)('keyhold login with TOTP MFA', () => {
  it('asks for the passcode after the password and completes through sys/mfa/validate', async () => {
    const entity = (
      await d.req('POST', 'auth/userpass/login/alice', { password: 'correct horse battery' }, { token: null })
    ).body.auth.entity_id;
    const method = (await must('POST', 'identity/mfa/method/totp', { issuer: 'keyhold' }, 200)).body.data.method_id;
    const url = new URL(
      (await must('POST', 'identity/mfa/method/totp/admin-generate', { method_id: method, entity_id: entity }, 200))
        .body.data.url,
    );
    const accessor = (await must('GET', 'sys/auth', undefined, 200)).body.data['userpass/'].accessor;
    await must('POST', 'identity/mfa/login-enforcement/people', {
      mfa_method_ids: [method],
      auth_method_accessors: [accessor],
    });
    const pwFile = join(d.dir, 'pw');
    writeFileSync(pwFile, 'correct horse battery\n', { mode: 0o600 });
    const code = execFileSync('oathtool', ['--totp', '-b', url.searchParams.get('secret')!], {
      encoding: 'utf8',
    }).trim();
    const r = await d.cli(
      ['login', '-method=userpass', 'username=alice', `password=@${pwFile}`, '-no-store', '-format=json'],
      { input: `${code}\n`, token: null },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).auth.client_token).toMatch(/^hvs\./); // the vault envelope (issue 34 item 1)
    const wrong = await d.cli(['login', '-method=userpass', 'username=alice', `password=@${pwFile}`], {
      input: '000000\n',
      token: null,
    });
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toMatch(/failed to satisfy enforcement people/);
  });

  it('asks for the passcode after any method (AppRole here) when an enforcement applies', async () => {
    await must('POST', 'sys/auth/approle', { type: 'approle' });
    await must('POST', 'auth/approle/role/svc', { token_policies: 'default' });
    const roleId = (await must('GET', 'auth/approle/role/svc/role-id', undefined, 200)).body.data.role_id;
    const secretId = (await must('POST', 'auth/approle/role/svc/secret-id', {}, 200)).body.data.secret_id;
    const entity = (
      await d.req('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null })
    ).body.auth.entity_id;
    const method = (await must('POST', 'identity/mfa/method/totp', { issuer: 'keyhold-svc' }, 200)).body.data.method_id;
    const url = new URL(
      (await must('POST', 'identity/mfa/method/totp/admin-generate', { method_id: method, entity_id: entity }, 200))
        .body.data.url,
    );
    await must('POST', 'identity/mfa/login-enforcement/machines', {
      mfa_method_ids: [method],
      auth_method_types: ['approle'],
    });
    const sidFile = join(d.dir, 'sid');
    writeFileSync(sidFile, secretId, { mode: 0o600 });
    const code = execFileSync('oathtool', ['--totp', '-b', url.searchParams.get('secret')!], {
      encoding: 'utf8',
    }).trim();
    const r = await d.cli(
      ['login', '-method=approle', `role_id=${roleId}`, `secret_id=@${sidFile}`, '-no-store', '-format=json'],
      { input: `${code}\n`, token: null },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).auth.client_token).toMatch(/^hvs\./); // the vault envelope (issue 34 item 1)
  });
});
