/**
 * Login MFA with TOTP through the real router and core (test/support/harness.ts), codes computed
 * by an independent implementation (Debian's oathtool, installed by scripts/setup-test-env.sh):
 * methods, admin-generate/admin-destroy, login enforcements by mount accessor, type and entity,
 * the mfa_requirement answer, sys/mfa/validate, the X-Vault-MFA header, single use per period and
 * the lockout after max_validation_attempts failures.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let hasOathtool = true;
try {
  execFileSync('oathtool', ['--version'], { stdio: 'ignore' });
} catch {
  hasOathtool = false;
  console.warn(
    'people-mfa: oathtool is not installed (scripts/setup-test-env.sh installs it); skipping the TOTP tests',
  );
}

let d: Harness;
let accessor: string;
let methodId: string;
let sha256Id: string;

async function must(
  method: string,
  path: string,
  body?: unknown,
  status = 204,
  opts?: { token?: string | null; headers?: Record<string, string> },
) {
  const r = await d.req(method, path, body, opts);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}
const login = (user: string, headers?: Record<string, string>) =>
  d.req('POST', `auth/userpass/login/${user}`, { password: `pw-${user}` }, { token: null, headers });
const validate = (id: string, payload: Record<string, string[]>) =>
  d.req('POST', 'sys/mfa/validate', { mfa_request_id: id, mfa_payload: payload }, { token: null });

/** The code oathtool computes now for an otpauth URL. */
function oath(url: string, at?: Date): string {
  const u = new URL(url);
  const p = u.searchParams;
  const args = [
    `--totp=${p.get('algorithm')}`,
    '-d',
    p.get('digits')!,
    '-s',
    `${p.get('period')}s`,
    '-b',
    p.get('secret')!,
  ];
  if (at)
    args.push(
      '-N',
      at
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC'),
    );
  return execFileSync('oathtool', args, { encoding: 'utf8' }).trim();
}

async function entityOf(user: string): Promise<string> {
  // Once an enforcement applies, a login answers no entity: find it by its alias instead (a first
  // login creates the entity before MFA is asked for, as in Vault).
  const lookup = async () =>
    (await d.req('POST', 'identity/lookup/entity', { alias_name: user, alias_mount_accessor: accessor })).body?.data
      ?.id as string | undefined;
  const found = await lookup();
  if (found) return found;
  const r = await login(user);
  expect(r.status, r.text).toBe(200);
  return r.body.auth.entity_id || (await lookup())!;
}
async function enrol(user: string, method = methodId): Promise<string> {
  const r = await must(
    'POST',
    'identity/mfa/method/totp/admin-generate',
    { method_id: method, entity_id: await entityOf(user) },
    200,
  );
  expect(r.body.data.url).toMatch(/^otpauth:\/\/totp\/keyhold:/);
  return r.body.data.url;
}

beforeAll(async () => {
  d = await startHarness();
  await must('POST', 'sys/auth/userpass', { type: 'userpass' });
  accessor = (await must('GET', 'sys/auth', undefined, 200)).body.data['userpass/'].accessor;
  for (const u of ['alice', 'bob', 'carol', 'dave', 'erin'])
    await must('POST', `auth/userpass/users/${u}`, { password: `pw-${u}` });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe.skipIf(!hasOathtool)('TOTP methods and enrolment', () => {
  it("creates a method (Vault's defaults), reads and lists it", async () => {
    methodId = (await must('POST', 'identity/mfa/method/totp', { issuer: 'keyhold', method_name: 'phone' }, 200)).body
      .data.method_id;
    const r = await must('GET', `identity/mfa/method/totp/${methodId}`, undefined, 200);
    expect(r.body.data).toMatchObject({
      id: methodId,
      name: 'phone',
      type: 'totp',
      issuer: 'keyhold',
      period: 30,
      digits: 6,
      algorithm: 'SHA1',
      skew: 1,
      key_size: 20,
      qr_size: 200,
      max_validation_attempts: 5,
    });
    sha256Id = (
      await must('POST', 'identity/mfa/method/totp', { issuer: 'keyhold', algorithm: 'SHA256', digits: 8 }, 200)
    ).body.data.method_id;
    expect((await must('LIST', 'identity/mfa/method/totp', undefined, 200)).body.data.keys.sort()).toEqual(
      [methodId, sha256Id].sort(),
    );
  });

  it('refuses bad method settings with 400 naming the field', async () => {
    for (const [body, field] of [
      [{ issuer: 'x', digits: 7 }, 'digits'],
      [{ issuer: 'x', algorithm: 'MD5' }, 'algorithm'],
      [{ issuer: 'x', skew: 2 }, 'skew'],
      [{}, 'issuer'],
    ] as const) {
      const r = await d.req('POST', 'identity/mfa/method/totp', body);
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toMatch(new RegExp(`^${field}: `));
    }
  });

  it('admin-generate answers an otpauth URL whose codes oathtool agrees with; a second call only warns', async () => {
    const url = await enrol('alice');
    const p = new URL(url).searchParams;
    expect(p.get('secret')).toMatch(/^[A-Z2-7]{32}$/);
    expect(p.get('issuer')).toBe('keyhold');
    const again = await must(
      'POST',
      'identity/mfa/method/totp/admin-generate',
      { method_id: methodId, entity_id: await entityOf('alice') },
      200,
    );
    expect(again.body.warnings[0]).toMatch(/already has a secret/);
  });
});

describe.skipIf(!hasOathtool)('login enforcement', () => {
  let aliceUrl: string;
  it('a login an enforcement applies to answers mfa_requirement and no token', async () => {
    // A fresh secret for alice (the one made above is replaced: admin-destroy, then admin-generate).
    await must('POST', 'identity/mfa/method/totp/admin-destroy', {
      method_id: methodId,
      entity_id: await entityOf('alice'),
    });
    aliceUrl = await enrol('alice');
    await must('POST', 'identity/mfa/login-enforcement/people', {
      mfa_method_ids: [methodId],
      auth_method_accessors: [accessor],
    });
    expect((await must('GET', 'identity/mfa/login-enforcement/people', undefined, 200)).body.data).toMatchObject({
      name: 'people',
      mfa_method_ids: [methodId],
      auth_method_accessors: [accessor],
      auth_method_types: [],
      identity_entity_ids: [],
    });
    const r = await login('alice');
    expect(r.status).toBe(200);
    expect(r.body.auth.client_token).toBe('');
    expect(r.body.auth.mfa_requirement.mfa_constraints).toEqual({
      people: { any: [{ type: 'totp', id: methodId, uses_passcode: true, name: 'phone' }] },
    });
    expect(r.body.warnings[0]).toMatch(/subject to MFA validation/);
  });

  it('sys/mfa/validate with the right code issues the token; the same code is refused next time (single use)', async () => {
    const code = oath(aliceUrl);
    const first = await login('alice');
    const ok = await validate(first.body.auth.mfa_requirement.mfa_request_id, { [methodId]: [code] });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.auth.client_token).toMatch(/^hvs\./);
    expect(ok.body.auth.metadata).toEqual({ username: 'alice' });
    expect(
      (await must('GET', 'auth/token/lookup-self', undefined, 200, { token: ok.body.auth.client_token })).body.data
        .display_name,
    ).toBe('userpass-alice');
    // The request id is spent.
    expect((await validate(first.body.auth.mfa_requirement.mfa_request_id, { [methodId]: [code] })).status).toBe(400);
    const second = await login('alice');
    const reused = await validate(second.body.auth.mfa_requirement.mfa_request_id, { phone: [code] });
    expect(reused.status).toBe(403);
    expect(reused.body.errors[0]).toMatch(
      /^failed to satisfy enforcement people\. error: code already used; new code is available in \d+ seconds$/,
    );
  });

  it('X-Vault-MFA completes the login in one request (by method id or name)', async () => {
    const url = await enrol('bob');
    const r = await login('bob', { 'X-Vault-MFA': `phone:${oath(url)}` });
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.client_token).toMatch(/^hvs\./);
    const bad = await login('bob', { 'X-Vault-MFA': `${methodId}:000000` });
    expect(bad.status).toBe(403);
  });

  it('locks out after max_validation_attempts wrong codes: even the right code is refused for a period', async () => {
    const url = await enrol('carol');
    const pending = (await login('carol')).body.auth.mfa_requirement.mfa_request_id;
    const right = oath(url);
    const wrong = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) {
      const r = await validate(pending, { [methodId]: [wrong] });
      expect(r.status).toBe(403);
      expect(r.body.errors[0]).toMatch(/failed to validate TOTP passcode$/);
    }
    const locked = await validate(pending, { [methodId]: [right] });
    expect(locked.status).toBe(403);
    expect(locked.body.errors[0]).toMatch(
      /maximum TOTP validation attempts 5 exceeded the allowed attempts 5\. Please try again in \d+ seconds/,
    );
  });

  it('a user without a secret cannot complete MFA; admin-destroy removes a secret', async () => {
    const pending = (await login('dave')).body.auth.mfa_requirement.mfa_request_id;
    const r = await validate(pending, { [methodId]: ['123456'] });
    expect(r.status).toBe(403);
    expect(r.body.errors[0]).toMatch(/does not have a TOTP secret/);
    const url = await enrol('dave');
    await must('POST', 'identity/mfa/method/totp/admin-destroy', {
      method_id: methodId,
      entity_id: await entityOf('dave'),
    });
    const p2 = (await login('dave')).body.auth.mfa_requirement.mfa_request_id;
    const gone = await validate(p2, { [methodId]: [oath(url)] });
    expect(gone.status).toBe(403);
    expect(gone.body.errors[0]).toMatch(/does not have a TOTP secret/);
  });

  it('enforcements by method type and entity id, with SHA256 8-digit codes; other mounts and entities are not asked', async () => {
    await must('DELETE', 'identity/mfa/login-enforcement/people');
    expect((await login('erin')).body.auth.client_token).toMatch(/^hvs\./);
    const erin = await entityOf('erin');
    const url = await enrol('erin', sha256Id);
    await must('POST', 'identity/mfa/login-enforcement/erin-only', {
      mfa_method_ids: [sha256Id],
      identity_entity_ids: [erin],
    });
    expect((await login('alice')).body.auth.client_token).toMatch(/^hvs\./);
    const r = await login('erin');
    expect(r.body.auth.client_token).toBe('');
    const code = oath(url);
    expect(code).toMatch(/^\d{8}$/);
    expect((await validate(r.body.auth.mfa_requirement.mfa_request_id, { [sha256Id]: [code] })).status).toBe(200);
    await must('DELETE', 'identity/mfa/login-enforcement/erin-only');
    await must('POST', 'identity/mfa/login-enforcement/by-type', {
      mfa_method_ids: [sha256Id],
      auth_method_types: ['userpass'],
    });
    expect((await login('alice')).body.auth.client_token).toBe('');
    await must('DELETE', 'identity/mfa/login-enforcement/by-type');
  });

  it("an enforcement by identity group applies to the group's members only (through nested groups too)", async () => {
    const erin = await entityOf('erin');
    const inner = (await must('POST', 'identity/group', { name: 'oncall', member_entity_ids: [erin] }, 200)).body.data
      .id;
    const outer = (await must('POST', 'identity/group', { name: 'ops', member_group_ids: [inner] }, 200)).body.data.id;
    await must('POST', 'identity/mfa/login-enforcement/ops-only', {
      mfa_method_ids: [sha256Id],
      identity_group_ids: [outer],
    });
    const r = await login('erin');
    expect(r.body.auth.client_token).toBe('');
    expect(Object.keys(r.body.auth.mfa_requirement.mfa_constraints)).toEqual(['ops-only']);
    expect((await login('alice')).body.auth.client_token).toMatch(/^hvs\./);
    await must('DELETE', 'identity/mfa/login-enforcement/ops-only');
  });

  it("generate enrols the calling token's own entity; a token without an entity is refused naming entity_id", async () => {
    await must('POST', 'sys/policy/self-enrol', {
      policy: 'path "identity/mfa/method/totp/generate" { capabilities = ["update"] }',
    });
    await must('POST', 'auth/userpass/users/frank', { password: 'pw-frank', token_policies: 'self-enrol' });
    const t = (await login('frank')).body.auth.client_token;
    expect(t).toMatch(/^hvs\./);
    const r = await must('POST', 'identity/mfa/method/totp/generate', { method_id: sha256Id }, 200, { token: t });
    const code = oath(r.body.data.url);
    expect(code).toMatch(/^\d{8}$/);
    const again = await must('POST', 'identity/mfa/method/totp/generate', { method_id: sha256Id }, 200, { token: t });
    expect(again.body.warnings[0]).toMatch(/already has a secret/);
    const root = await d.req('POST', 'identity/mfa/method/totp/generate', { method_id: sha256Id });
    expect(root.status).toBe(400);
    expect(root.body.errors[0]).toMatch(/^entity_id: /);
  });

  it('refuses an enforcement without targets or with unknown methods/accessors, and deleting a method in use', async () => {
    expect(
      (await d.req('POST', 'identity/mfa/login-enforcement/x', { mfa_method_ids: [methodId] })).body.errors[0],
    ).toMatch(/One of auth_method_accessors/);
    expect(
      (
        await d.req('POST', 'identity/mfa/login-enforcement/x', {
          mfa_method_ids: ['nope'],
          auth_method_types: ['userpass'],
        })
      ).body.errors[0],
    ).toMatch(/^mfa_method_ids: /);
    expect(
      (
        await d.req('POST', 'identity/mfa/login-enforcement/x', {
          mfa_method_ids: [methodId],
          auth_method_accessors: ['auth_userpass_00000000'],
        })
      ).body.errors[0],
    ).toMatch(/^auth_method_accessors: /);
    await must('POST', 'identity/mfa/login-enforcement/keep', {
      mfa_method_ids: [methodId],
      auth_method_types: ['github'],
    });
    const del = await d.req('DELETE', `identity/mfa/method/totp/${methodId}`);
    expect(del.status).toBe(400);
    expect(del.body.errors[0]).toMatch(/used by login enforcement "keep"/);
  });

  it('an unknown or expired MFA request id is a 400 naming mfa_request_id', async () => {
    const r = await validate('00000000-0000-0000-0000-000000000000', { [methodId]: ['123456'] });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^mfa_request_id: /);
  });
});
