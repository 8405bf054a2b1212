/**
 * AppRole, sys/auth and the token store through the real router and core (test/support/harness.ts):
 * every AppRole endpoint, secret-id TTL/uses/CIDR binding, bind_secret_id, token_* fields, periodic
 * tokens, token roles, revoke-orphan with sudo, disable revoking the method's tokens, and audit of
 * refused logins and bad tokens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
let auditFile: string;

async function must(method: string, path: string, body?: unknown, status = 204, token?: string) {
  const r = await d.req(method, path, body, token ? { token } : undefined);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  d = await startHarness();
  auditFile = join(d.dir, 'audit.log');
  await must('PUT', 'sys/audit/file', { type: 'file', options: { file_path: auditFile } });
  await must('POST', 'sys/auth/approle', { type: 'approle', description: 'services' });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

async function roleId(role: string): Promise<string> {
  return (await must('GET', `auth/approle/role/${role}/role-id`, undefined, 200)).body.data.role_id;
}
async function secretId(
  role: string,
  body: Record<string, unknown> = {},
): Promise<{ secret_id: string; secret_id_accessor: string; secret_id_ttl: number; secret_id_num_uses: number }> {
  return (await must('POST', `auth/approle/role/${role}/secret-id`, body, 200)).body.data;
}
function login(body: Record<string, unknown>) {
  return d.req('POST', 'auth/approle/login', body, { token: null });
}

describe('sys/auth', () => {
  it('lists token/ and approle/ with auth_<type>_<8 hex> accessors, top-level copies, and TTLs 0 when unset', async () => {
    const r = await must('GET', 'sys/auth', undefined, 200);
    expect(r.body.data['approle/']).toMatchObject({
      type: 'approle',
      description: 'services',
      config: { default_lease_ttl: 0, max_lease_ttl: 0, token_type: 'default-service' },
      local: false,
      seal_wrap: false,
    });
    expect(r.body.data['approle/'].accessor).toMatch(/^auth_approle_[0-9a-f]{8}$/);
    expect(r.body.data['token/'].accessor).toMatch(/^auth_token_[0-9a-f]{8}$/);
    expect(r.body['approle/']).toEqual(r.body.data['approle/']);
    expect((await must('GET', 'sys/auth/approle', undefined, 200)).body.data.type).toBe('approle');
  });

  it('tunes through sys/auth/:path/tune and sys/mounts/auth/:path/tune; tune read shows effective TTLs', async () => {
    await must('POST', 'sys/auth/approle/tune', {
      default_lease_ttl: '1h',
      max_lease_ttl: '24h',
      description: 'tuned',
    });
    const t = await must('GET', 'sys/mounts/auth/approle/tune', undefined, 200);
    expect(t.body.data).toMatchObject({
      default_lease_ttl: 3600,
      max_lease_ttl: 86400,
      description: 'tuned',
      token_type: 'default-service',
    });
    const bad = await d.req('POST', 'sys/auth/approle/tune', { default_lease_ttl: '48h' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['given default lease TTL greater than given max lease TTL']);
    await must('POST', 'sys/mounts/auth/approle/tune', { default_lease_ttl: 'system', max_lease_ttl: 'system' });
    expect((await must('GET', 'sys/auth/approle/tune', undefined, 200)).body.data.max_lease_ttl).toBe(768 * 3600);
  });

  it("refuses bad enables with Vault's messages", async () => {
    expect((await d.req('POST', 'sys/auth/x', {})).body.errors).toEqual(['backend type must be specified as a string']);
    expect((await d.req('POST', 'sys/auth/x', { type: 'token' })).body.errors).toEqual([
      'token credential backend cannot be instantiated',
    ]);
    expect((await d.req('POST', 'sys/auth/x', { type: 'approle', options: { version: '2' } })).body.errors).toEqual([
      'auth method "approle" does not allow setting a version',
    ]);
    const dup = await d.req('POST', 'sys/auth/approle', { type: 'approle' });
    expect(dup.status).toBe(409);
    expect((await d.req('DELETE', 'sys/auth/token')).body.errors).toEqual([
      'token credential backend cannot be disabled',
    ]);
    expect((await d.req('GET', 'sys/auth/nothing')).status).toBe(400);
  });

  it('lists auth mounts tuned listing_visibility=unauth in sys/internal/ui/mounts without a token', async () => {
    await must('POST', 'sys/auth/visible', {
      type: 'approle',
      description: 'login here',
      config: { listing_visibility: 'unauth' },
    });
    const r = await d.req('GET', 'sys/internal/ui/mounts', undefined, { token: null });
    expect(r.status).toBe(200);
    expect(r.body.data.auth).toEqual({ 'visible/': { type: 'approle', description: 'login here', options: null } });
    await must('DELETE', 'sys/auth/visible');
  });

  it('needs sudo for enable but not for list', async () => {
    await must('PUT', 'sys/policies/acl/auth-reader', {
      policy: 'path "sys/auth" { capabilities = ["read"] }\npath "sys/auth/*" { capabilities = ["create", "update"] }',
    });
    const t = (await must('POST', 'auth/token/create', { policies: ['auth-reader'] }, 200)).body.auth.client_token;
    expect((await d.req('GET', 'sys/auth', undefined, { token: t })).status).toBe(200);
    expect((await d.req('POST', 'sys/auth/other', { type: 'approle' }, { token: t })).status).toBe(403);
  });
});

describe('AppRole', () => {
  beforeAll(async () => {
    await must('PUT', 'sys/policies/acl/svc', { policy: 'path "secret/data/svc/*" { capabilities = ["read"] }' });
    await must('POST', 'auth/approle/role/Svc', {
      token_policies: 'svc',
      token_ttl: '20m',
      token_max_ttl: '1h',
      secret_id_num_uses: 3,
      secret_id_ttl: '10m',
    });
  });

  it('stores role names lower-cased and reads every field as Vault does', async () => {
    const r = await must('GET', 'auth/approle/role/svc', undefined, 200);
    expect(r.body.data).toEqual({
      bind_secret_id: true,
      local_secret_ids: false,
      secret_id_bound_cidrs: [],
      secret_id_num_uses: 3,
      secret_id_ttl: 600,
      token_bound_cidrs: [],
      token_explicit_max_ttl: 0,
      token_max_ttl: 3600,
      token_no_default_policy: false,
      token_num_uses: 0,
      token_period: 0,
      token_policies: ['svc'],
      token_ttl: 1200,
      token_type: 'default',
    });
    expect((await must('LIST', 'auth/approle/role', undefined, 200)).body.data.keys).toEqual(['svc']);
    expect((await must('GET', 'auth/approle/role/svc/policies', undefined, 200)).body.data).toEqual({
      policies: ['svc'],
      token_policies: ['svc'],
    });
  });

  it('logs in with role_id + secret_id; the auth block carries role_name metadata and an entity; uses are counted', async () => {
    const rid = await roleId('svc');
    const sid = await secretId('svc', { metadata: JSON.stringify({ env: 'ci' }), num_uses: 2 });
    expect(sid).toMatchObject({ secret_id_ttl: 600, secret_id_num_uses: 2 });
    const ok = await login({ role_id: rid, secret_id: sid.secret_id });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.auth).toMatchObject({
      policies: ['default', 'svc'],
      metadata: { env: 'ci', role_name: 'svc' },
      lease_duration: 1200,
      renewable: true,
      orphan: true,
      token_type: 'service',
    });
    expect(ok.body.auth.entity_id).toMatch(/^[0-9a-f-]{36}$/);
    const look = await must('POST', 'auth/approle/role/svc/secret-id/lookup', { secret_id: sid.secret_id }, 200);
    expect(look.body.data).toMatchObject({
      secret_id_accessor: sid.secret_id_accessor,
      secret_id_num_uses: 1,
      metadata: { env: 'ci' },
      cidr_list: [],
      token_bound_cidrs: [],
    });
    expect((await login({ role_id: rid, secret_id: sid.secret_id })).status).toBe(200);
    const spent = await login({ role_id: rid, secret_id: sid.secret_id });
    expect(spent.status).toBe(400);
    expect(spent.body.errors).toEqual(['invalid role or secret ID']);
    // Gone, accessor and all: lookup of an unknown secret id is a 204 as in Vault.
    expect((await d.req('POST', 'auth/approle/role/svc/secret-id/lookup', { secret_id: sid.secret_id })).status).toBe(
      204,
    );
  });

  it("refuses with Vault's messages: missing/unknown role_id, missing secret_id, limits on generation", async () => {
    expect((await login({})).body.errors).toEqual(['missing role_id']);
    expect((await login({ role_id: 'nope', secret_id: 'x' })).body.errors).toEqual(['invalid role or secret ID']);
    expect((await login({ role_id: await roleId('svc'), secret_id: '' })).body.errors).toEqual(['missing secret_id']);
    expect((await d.req('POST', 'auth/approle/role/svc/secret-id', { num_uses: 5 })).body.errors).toEqual([
      "num_uses cannot be higher than the role's secret_id_num_uses",
    ]);
    expect((await d.req('POST', 'auth/approle/role/svc/secret-id', { ttl: '1h' })).body.errors).toEqual([
      "ttl cannot be longer than the role's secret_id_ttl",
    ]);
    expect((await d.req('POST', 'auth/approle/role/svc/secret-id', { metadata: '{"n": 1}' })).status).toBe(400);
    expect((await d.req('POST', 'auth/approle/role/nope/secret-id', {})).status).toBe(404);
  });

  it('lists, looks up and destroys secret ids by accessor; custom secret ids register once', async () => {
    const a = await secretId('svc');
    const c = await must('POST', 'auth/approle/role/svc/custom-secret-id', { secret_id: 'my-own-secret-id-123' }, 200);
    expect(c.body.data.secret_id).toBe('my-own-secret-id-123');
    expect(
      (await d.req('POST', 'auth/approle/role/svc/custom-secret-id', { secret_id: 'my-own-secret-id-123' })).status,
    ).toBe(400);
    const list = await must('LIST', 'auth/approle/role/svc/secret-id', undefined, 200);
    expect(list.body.data.keys).toEqual(expect.arrayContaining([a.secret_id_accessor, c.body.data.secret_id_accessor]));
    const byAcc = await must(
      'POST',
      'auth/approle/role/svc/secret-id-accessor/lookup',
      { secret_id_accessor: a.secret_id_accessor },
      200,
    );
    expect(byAcc.body.data.secret_id_accessor).toBe(a.secret_id_accessor);
    await must('POST', 'auth/approle/role/svc/secret-id-accessor/destroy', {
      secret_id_accessor: a.secret_id_accessor,
    });
    const gone = await d.req('POST', 'auth/approle/role/svc/secret-id-accessor/lookup', {
      secret_id_accessor: a.secret_id_accessor,
    });
    expect(gone.status).toBe(404);
    expect(gone.body.data.error).toBe(
      `failed to find accessor entry for secret_id_accessor: "${a.secret_id_accessor}"`,
    );
    await must('POST', 'auth/approle/role/svc/secret-id/destroy', { secret_id: 'my-own-secret-id-123' });
    expect((await login({ role_id: await roleId('svc'), secret_id: 'my-own-secret-id-123' })).status).toBe(400);
  });

  it("binds logins to CIDRs: a source outside the role's or secret id's blocks is refused", async () => {
    await must('POST', 'auth/approle/role/net', { secret_id_bound_cidrs: '10.0.0.0/8', token_policies: 'svc' });
    const rid = await roleId('net');
    const sid = await secretId('net');
    const r = await login({ role_id: rid, secret_id: sid.secret_id });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^source address "127\.0\.0\.1" unauthorized by CIDR restrictions on the role/);
    expect((await d.req('POST', 'auth/approle/role/net/secret-id', { cidr_list: '192.168.0.0/16' })).status).toBe(400);
    // bind_secret_id=false with a CIDR binding: role_id alone logs in from inside the block.
    await must('POST', 'auth/approle/role/local', {
      bind_secret_id: false,
      secret_id_bound_cidrs: ['127.0.0.1/32'],
      token_policies: 'svc',
    });
    const only = await login({ role_id: await roleId('local') });
    expect(only.status, only.text).toBe(200);
    const none = await d.req('POST', 'auth/approle/role/loose', { bind_secret_id: false });
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual(['at least one constraint should be enabled on the role']);
  });

  it('token_bound_cidrs: the issued token works only from inside the blocks (403 elsewhere)', async () => {
    await must('POST', 'auth/approle/role/bound-far', { token_bound_cidrs: '10.0.0.0/8', token_policies: 'svc' });
    await must('POST', 'auth/approle/role/bound-near', { token_bound_cidrs: '127.0.0.0/8', token_policies: 'svc' });
    const far = await login({ role_id: await roleId('bound-far'), secret_id: (await secretId('bound-far')).secret_id });
    expect(far.status, far.text).toBe(200);
    const refused = await d.req('GET', 'auth/token/lookup-self', undefined, { token: far.body.auth.client_token });
    expect(refused.status).toBe(403);
    expect(refused.body.errors).toEqual(['permission denied']);
    const near = await login({
      role_id: await roleId('bound-near'),
      secret_id: (await secretId('bound-near')).secret_id,
    });
    const ok = await d.req('GET', 'auth/token/lookup-self', undefined, { token: near.body.auth.client_token });
    expect(ok.status).toBe(200);
    expect(ok.body.data.bound_cidrs).toEqual(['127.0.0.0/8']);
  });

  it('issues periodic tokens with token_period (renewal resets to the period) and validates token_* fields', async () => {
    await must('POST', 'auth/approle/role/periodic', { token_period: '30m', token_policies: 'svc' });
    const t = (await login({ role_id: await roleId('periodic'), secret_id: (await secretId('periodic')).secret_id }))
      .body.auth;
    expect(t.lease_duration).toBe(1800);
    const renewed = await must('POST', 'auth/token/renew-self', { increment: '5h' }, 200, t.client_token);
    expect(renewed.body.auth.lease_duration).toBe(1800);
    expect((await must('GET', 'auth/token/lookup-self', undefined, 200, t.client_token)).body.data).toMatchObject({
      period: 1800,
      path: 'auth/approle/login',
      role: 'periodic',
      display_name: 'approle',
    });
    expect(
      (await d.req('POST', 'auth/approle/role/svc', { token_ttl: '2h', token_max_ttl: '1h' })).body.errors,
    ).toEqual(["'token_ttl' cannot be greater than 'token_max_ttl'"]);
    expect((await d.req('POST', 'auth/approle/role/svc', { token_type: 'weird' })).body.errors).toEqual([
      'invalid \'token_type\' value "weird"',
    ]);
  });

  it('delivers a secret id wrapped end to end: wrap_info names its accessor, the workload checks the path, unwraps once and logs in', async () => {
    const w = await d.req('POST', 'auth/approle/role/svc/secret-id', {}, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    expect(w.status, w.text).toBe(200);
    expect(w.body.data).toBeNull();
    const info = w.body.wrap_info;
    expect(info).toMatchObject({ ttl: 60, creation_path: 'auth/approle/role/svc/secret-id' });
    const accessors = (await must('LIST', 'auth/approle/role/svc/secret-id', undefined, 200)).body.data.keys;
    expect(accessors).toContain(info.wrapped_accessor);
    // The workload (Vault Agent does this): lookup is unauthenticated and checks creation_path.
    const look = await d.req('POST', 'sys/wrapping/lookup', { token: info.token }, { token: null });
    expect(look.body.data.creation_path).toBe('auth/approle/role/svc/secret-id');
    const un = await d.req('PUT', 'sys/wrapping/unwrap', undefined, { token: info.token, raw: 'null' });
    expect(un.status, un.text).toBe(200);
    const sid = un.body.data.secret_id;
    expect(un.body.data.secret_id_accessor).toBe(info.wrapped_accessor);
    expect((await login({ role_id: await roleId('svc'), secret_id: sid })).status).toBe(200);
    const again = await d.req('PUT', 'sys/wrapping/unwrap', undefined, { token: info.token, raw: 'null' });
    expect(again.status).toBe(400);
  });

  it('locks a role id out after repeated wrong secret ids (user lockout, tunable), then lets it in again', async () => {
    await must('POST', 'sys/auth/locked', { type: 'approle' });
    await must('POST', 'sys/auth/locked/tune', {
      user_lockout_config: { lockout_threshold: 2, lockout_duration: '2s', lockout_counter_reset: '1m' },
    });
    await must('POST', 'auth/locked/role/r', { token_policies: 'svc' });
    const rid = (await must('GET', 'auth/locked/role/r/role-id', undefined, 200)).body.data.role_id;
    const sid = (await must('POST', 'auth/locked/role/r/secret-id', {}, 200)).body.data.secret_id;
    const try_ = (secret: string) =>
      d.req('POST', 'auth/locked/login', { role_id: rid, secret_id: secret }, { token: null });
    expect((await try_('wrong-1')).status).toBe(400);
    expect((await try_('wrong-2')).status).toBe(400);
    const locked = await try_(sid);
    expect(locked.status).toBe(403);
    expect(locked.body.errors).toEqual(['permission denied']);
    await new Promise((r) => setTimeout(r, 2200));
    expect((await try_(sid)).status).toBe(200);
    expect(
      (await d.req('POST', 'sys/auth/approle/tune', { user_lockout_config: { lockout_threshold: 'x' } })).status,
    ).toBe(400);
  });

  it("tidy answers 202 with Vault's warning", async () => {
    const r = await must('POST', 'auth/approle/tidy/secret-id', {}, 202);
    expect(r.body.warnings).toEqual([
      "Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs.",
    ]);
  });
});

describe('token store', () => {
  it('token roles: CRUD, LIST, create/:role within allowed policies, orphan, period, path', async () => {
    await must('POST', 'auth/token/roles/deployer', {
      allowed_policies: 'svc,deploy',
      disallowed_policies: 'admin',
      orphan: true,
      token_period: '24h',
      path_suffix: 'ci',
    });
    expect((await must('GET', 'auth/token/roles/deployer', undefined, 200)).body.data).toMatchObject({
      name: 'deployer',
      allowed_policies: ['deploy', 'svc'],
      orphan: true,
      period: 86400,
      token_period: 86400,
      path_suffix: 'ci',
      renewable: true,
    });
    expect((await must('LIST', 'auth/token/roles', undefined, 200)).body.data.keys).toEqual(['deployer']);
    const r = await must('POST', 'auth/token/create/deployer', { policies: ['svc'] }, 200);
    expect(r.body.auth).toMatchObject({ policies: ['default', 'svc'], orphan: true, lease_duration: 86400 });
    const look = await must('GET', 'auth/token/lookup-self', undefined, 200, r.body.auth.client_token);
    expect(look.body.data).toMatchObject({
      path: 'auth/token/create/deployer/ci',
      role: 'deployer',
      period: 86400,
      orphan: true,
    });
    const bad = await d.req('POST', 'auth/token/create/deployer', { policies: ['admin'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/must be subset of the role's allowed policies/);
    await must('DELETE', 'auth/token/roles/deployer');
    expect((await d.req('GET', 'auth/token/roles/deployer')).status).toBe(404);
  });

  it('sudo inside the token store: orphans, periods and foreign policies need root or sudo; revoke-orphan needs sudo', async () => {
    await must('PUT', 'sys/policies/acl/maker', {
      policy:
        'path "auth/token/create" { capabilities = ["update"] }\npath "auth/token/revoke-orphan" { capabilities = ["update"] }',
    });
    await must('PUT', 'sys/policies/acl/sudo-maker', {
      policy:
        'path "auth/token/create" { capabilities = ["update", "sudo"] }\npath "auth/token/revoke-orphan" { capabilities = ["update", "sudo"] }',
    });
    const plain = (await must('POST', 'auth/token/create', { policies: ['maker'] }, 200)).body.auth.client_token;
    const sudo = (await must('POST', 'auth/token/create', { policies: ['sudo-maker'] }, 200)).body.auth.client_token;
    expect(
      (await d.req('POST', 'auth/token/create', { no_parent: true, policies: ['maker'] }, { token: plain })).body
        .errors,
    ).toEqual(['root or sudo privileges required to create orphan token']);
    expect(
      (await d.req('POST', 'auth/token/create', { period: '1h', policies: ['maker'] }, { token: plain })).body.errors,
    ).toEqual(['root or sudo privileges required to create periodic token']);
    expect((await d.req('POST', 'auth/token/create', { policies: ['svc'] }, { token: plain })).status).toBe(400);
    const orphan = await d.req(
      'POST',
      'auth/token/create',
      { no_parent: true, policies: ['svc'], period: '1h' },
      { token: sudo },
    );
    expect(orphan.status, orphan.text).toBe(200);
    expect(orphan.body.auth).toMatchObject({ orphan: true, policies: ['default', 'svc'], lease_duration: 3600 });
    const victim = (await must('POST', 'auth/token/create', { policies: ['svc'] }, 200)).body.auth.client_token;
    expect((await d.req('POST', 'auth/token/revoke-orphan', { token: victim }, { token: plain })).body.errors).toEqual([
      'root or sudo privileges required to revoke and orphan',
    ]);
    await must('POST', 'auth/token/revoke-orphan', { token: victim }, 204, sudo);
    expect((await d.req('POST', 'auth/token/revoke-orphan', { token: victim }, { token: sudo })).body.errors).toEqual([
      'token to revoke not found',
    ]);
  });

  it('renews and revokes by accessor; an unknown accessor revoke is 200 with a warning', async () => {
    const a = (await must('POST', 'auth/token/create', { policies: ['svc'], ttl: '1h', explicit_max_ttl: '2h' }, 200))
      .body.auth;
    const r = await must('POST', 'auth/token/renew-accessor', { accessor: a.accessor, increment: '3h' }, 200);
    expect(r.body.auth.lease_duration).toBeLessThanOrEqual(7200);
    expect(r.body.auth.lease_duration).toBeGreaterThan(7000);
    await must('POST', 'auth/token/revoke-accessor', { accessor: a.accessor });
    const again = await must('POST', 'auth/token/revoke-accessor', { accessor: a.accessor }, 200);
    expect(again.body.warnings).toEqual(['No token found with this accessor']);
    expect((await d.req('POST', 'auth/token/renew', { token: 'hvs.nope' })).body.errors).toEqual(['token not found']);
  });

  it('disabling an auth method revokes the tokens it issued', async () => {
    await must('POST', 'sys/auth/temp', { type: 'approle' });
    await must('POST', 'auth/temp/role/r', { token_policies: 'svc' });
    const rid = (await must('GET', 'auth/temp/role/r/role-id', undefined, 200)).body.data.role_id;
    const sid = (await must('POST', 'auth/temp/role/r/secret-id', {}, 200)).body.data.secret_id;
    const t = (await d.req('POST', 'auth/temp/login', { role_id: rid, secret_id: sid }, { token: null })).body.auth
      .client_token;
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    await must('DELETE', 'sys/auth/temp');
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(403);
    expect((await d.req('GET', 'sys/auth')).body.data['temp/']).toBeUndefined();
  });
});

describe('audit', () => {
  it('audits refused logins and requests with a missing, bad or expired token (hashed, no secret in the log)', async () => {
    await login({ role_id: 'definitely-not-a-role', secret_id: 'super-secret-value-xyz' });
    await d.req('GET', 'sys/mounts', undefined, { token: 'hvs.bogus-token-value' });
    await d.req('GET', 'sys/mounts', undefined, { token: null });
    await new Promise((r) => setTimeout(r, 200));
    const text = readFileSync(auditFile, 'utf8');
    expect(text).not.toContain('super-secret-value-xyz');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(
      lines.some(
        (l) =>
          l.type === 'response' && l.request.path === 'auth/approle/login' && l.error === 'invalid role or secret ID',
      ),
    ).toBe(true);
    const refused = lines.filter(
      (l) =>
        l.type === 'response' &&
        l.request.path === 'sys/mounts' &&
        l.error === 'permission denied' &&
        l.response.status === 403,
    );
    expect(refused.length).toBeGreaterThanOrEqual(2);
  });
});
