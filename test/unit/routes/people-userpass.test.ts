/**
 * userpass through the real router and core (test/support/harness.ts): users CRUD with Vault's
 * answers (what hvac's create/read/list/login calls expect), password and policies endpoints,
 * token_* fields through the one TTL rule, bound CIDRs, lockout, and the timing of an unknown user
 * against a wrong password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;

async function must(method: string, path: string, body?: unknown, status = 204, token?: string) {
  const r = await d.req(method, path, body, token ? { token } : undefined);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}
function login(user: string, password: string, mount = 'userpass') {
  return d.req('POST', `auth/${mount}/login/${user}`, { password }, { token: null });
}

beforeAll(async () => {
  d = await startHarness();
  await must('POST', 'sys/auth/userpass', { type: 'userpass' });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('userpass users', () => {
  it('creates a user as hvac does (password + policies), lists and reads it without any password field', async () => {
    await must('POST', 'auth/userpass/users/Alice', { password: 'correct horse', policies: 'not_root' });
    const list = await must('LIST', 'auth/userpass/users', undefined, 200);
    expect(list.body.data.keys).toEqual(['alice']);
    const read = await must('GET', 'auth/userpass/users/alice', undefined, 200);
    expect(read.body.data).toMatchObject({
      token_policies: ['not_root'],
      policies: ['not_root'],
      token_ttl: 0,
      token_max_ttl: 0,
      token_type: 'default',
      token_bound_cidrs: [],
    });
    expect(JSON.stringify(read.body)).not.toMatch(/password|\$2[aby]\$/);
  });

  it('refuses a new user without a password (400 naming it) and an update needs none', async () => {
    const r = await d.req('POST', 'auth/userpass/users/bob', { policies: 'a' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing password']);
    await must('POST', 'auth/userpass/users/alice', { token_ttl: '1h' });
    expect((await login('alice', 'correct horse')).status).toBe(200);
  });

  it('refuses a password past bcrypt\'s 72 bytes with 400 naming "password"', async () => {
    const r = await d.req('POST', 'auth/userpass/users/long', { password: 'x'.repeat(73) });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^password: must be at most 72 bytes/);
  });

  it('accepts a bcrypt password_hash (Vault 1.17+) and refuses anything else there', async () => {
    // $2a$ hash of "hunter22" at cost 4, made with OpenBSD's reference format.
    const bad = await d.req('POST', 'auth/userpass/users/hashy', { password_hash: 'md5:abc' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^password_hash: /);
    const { default: bcrypt } = await import('bcryptjs');
    await must('POST', 'auth/userpass/users/hashy', { password_hash: bcrypt.hashSync('hunter22', 4) });
    expect((await login('hashy', 'hunter22')).status).toBe(200);
    expect((await login('hashy', 'hunter23')).status).toBe(400);
  });

  it('changes the password through users/:name/password; the old one stops working', async () => {
    await must('POST', 'auth/userpass/users/carol', { password: 'first-pass' });
    await must('POST', 'auth/userpass/users/carol/password', { password: 'second-pass' });
    expect((await login('carol', 'first-pass')).status).toBe(400);
    expect((await login('carol', 'second-pass')).status).toBe(200);
    expect((await d.req('POST', 'auth/userpass/users/nobody/password', { password: 'x' })).status).toBe(404);
  });

  it('changes policies through users/:name/policies and the next token carries them', async () => {
    await must('POST', 'auth/userpass/users/carol/policies', { policies: 'dev,ops' });
    const r = await login('carol', 'second-pass');
    expect(r.body.auth.policies).toEqual(['default', 'dev', 'ops']);
  });

  it('deletes a user; its login then fails like any wrong password', async () => {
    await must('POST', 'auth/userpass/users/dave', { password: 'pw-dave' });
    await must('DELETE', 'auth/userpass/users/dave');
    expect((await d.req('GET', 'auth/userpass/users/dave')).status).toBe(404);
    const r = await login('dave', 'pw-dave');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['invalid username or password']);
  });
});

describe('userpass login', () => {
  it("answers Vault's auth block (metadata username, display name, entity) and the token works", async () => {
    await must('POST', 'auth/userpass/users/erin', { password: 'pw-erin', policies: 'not_root', ttl: '10s' });
    const r = await login('ERIN', 'pw-erin');
    expect(r.status).toBe(200);
    expect(r.body.auth).toMatchObject({
      policies: ['default', 'not_root'],
      token_policies: ['default', 'not_root'],
      metadata: { username: 'erin' },
      lease_duration: 10,
      renewable: true,
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
    });
    expect(r.body.auth.accessor).toBeTruthy();
    expect(r.body.auth.entity_id).toMatch(/^[0-9a-f-]{36}$/);
    const self = await must('GET', 'auth/token/lookup-self', undefined, 200, r.body.auth.client_token);
    expect(self.body.data).toMatchObject({
      display_name: 'userpass-erin',
      path: 'auth/userpass/login/erin',
      meta: { username: 'erin' },
    });
    // The same person logs in again: the same entity.
    expect((await login('erin', 'pw-erin')).body.auth.entity_id).toBe(r.body.auth.entity_id);
  });

  it("caps a TTL past the mount max with Vault's warning (the one TTL rule)", async () => {
    await must('POST', 'sys/auth/userpass/tune', { max_lease_ttl: '1h' });
    await must('POST', 'auth/userpass/users/frank', { password: 'pw-frank', token_ttl: '2h' });
    const r = await login('frank', 'pw-frank');
    expect(r.body.auth.lease_duration).toBe(3600);
    expect(r.body.warnings.join(' ')).toMatch(/exceeded the effective max_ttl of "1h"/);
    await must('POST', 'sys/auth/userpass/tune', { max_lease_ttl: 'system' });
  });

  it('refuses a login from outside token_bound_cidrs with 403', async () => {
    await must('POST', 'auth/userpass/users/gina', { password: 'pw-gina', token_bound_cidrs: '10.0.0.0/8' });
    expect((await login('gina', 'pw-gina')).status).toBe(403);
  });

  it('refuses a missing password with 400 and never answers 500 for odd input', async () => {
    const r = await d.req('POST', 'auth/userpass/login/alice', {}, { token: null });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing password']);
    expect((await d.req('POST', 'auth/userpass/login/alice', { password: ['a'] }, { token: null })).status).toBe(400);
  });

  it('locks a user out after 5 wrong passwords (403), even for the right one, while others still log in', async () => {
    await must('POST', 'auth/userpass/users/hank', { password: 'pw-hank' });
    for (let i = 0; i < 5; i++) expect((await login('hank', 'nope')).status).toBe(400);
    expect((await login('hank', 'pw-hank')).status).toBe(403);
    expect((await login('erin', 'pw-erin')).status).toBe(200);
  });
});

describe('userpass timing', () => {
  it('an unknown user costs the time of a wrong password (median ratio within 0.8-1.25)', async () => {
    await must('POST', 'sys/auth/userpass/tune', { user_lockout_config: { lockout_disable: true } });
    await must('POST', 'auth/userpass/users/ivan', { password: 'pw-ivan' });
    await login('ghost', 'warm-up'); // the dummy hash is made at the first unknown user
    const unknown: number[] = [];
    const wrong: number[] = [];
    const time = async (user: string) => {
      const t = process.hrtime.bigint();
      const r = await login(user, 'not-the-password');
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['invalid username or password']);
      return Number(process.hrtime.bigint() - t) / 1e6;
    };
    for (let i = 0; i < 30; i++) {
      // Interleaved, so load on the machine hits both series alike.
      unknown.push(await time(`ghost${i}`));
      wrong.push(await time('ivan'));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const ratio = median(unknown) / median(wrong);
    console.log(
      `userpass timing: unknown ${median(unknown).toFixed(1)} ms, wrong password ${median(wrong).toFixed(1)} ms, ratio ${ratio.toFixed(3)}`,
    );
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.25);
  }, 120_000);
});
