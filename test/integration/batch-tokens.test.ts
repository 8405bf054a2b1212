/**
 * Batch tokens (Vault's `hvb.` tokens) against the real daemon: issued by AppRole and JWT roles, by
 * auth mounts tuned to batch and by auth/token/create; usable for requests and lookups; never
 * written to storage; refused for renewal, revocation, child tokens and cubbyholes with Vault's
 * messages; ended by their TTL and by their parent's revocation; still valid after a restart;
 * forgeries and tampered tokens refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
let recoveryKey: string;
let rootToken: string;

/** Start (or restart on the same storage) a production-mode daemon on file storage, unsealed. */
async function boot(dir?: string): Promise<void> {
  d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'] });
  if (!dir) {
    const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
    expect(init.status, init.text).toBe(200);
    recoveryKey = init.body.keys[0];
    rootToken = init.body.root_token;
  }
  expect((await d.req('POST', 'sys/unseal', { key: recoveryKey }, { token: null })).status).toBe(200);
}

async function must(method: string, path: string, body?: unknown, status = 204, token?: string) {
  const r = await d.req(method, path, body, { token: token ?? rootToken });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

/** Every byte of the daemon's storage files (to show that a batch token is never written). */
function storageBytes(): Buffer {
  const out: Buffer[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.isFile()) out.push(readFileSync(join(dir, e.name)));
    }
  };
  walk(join(d.dir, 'data'));
  return Buffer.concat(out);
}

async function approleLogin(role: string): Promise<Record<string, any>> {
  const roleId = (await must('GET', `auth/approle/role/${role}/role-id`, undefined, 200)).body.data.role_id;
  const secretId = (await must('POST', `auth/approle/role/${role}/secret-id`, {}, 200)).body.data.secret_id;
  return (await must('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, 200)).body.auth;
}

beforeAll(async () => {
  await boot();
  await must('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } });
  await must('POST', 'sys/auth/approle', { type: 'approle' });
  await must('POST', 'sys/policies/acl/reader', {
    policy:
      'path "secret/data/*" { capabilities = ["read", "create", "update"] }\npath "auth/token/create" { capabilities = ["update"] }',
  });
  await must('POST', 'auth/approle/role/ci', {
    token_policies: 'reader',
    token_type: 'batch',
    token_ttl: '2s',
    token_max_ttl: '1h',
  });
  await must('POST', 'auth/approle/role/svc', { token_policies: 'reader', token_ttl: '1h' });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('batch tokens from logins', () => {
  it('an AppRole role with token_type=batch issues an hvb. token: no accessor, not renewable, usable, never stored', async () => {
    const creds = async (role: string) => ({
      role_id: (await must('GET', `auth/approle/role/${role}/role-id`, undefined, 200)).body.data.role_id,
      secret_id: (await must('POST', `auth/approle/role/${role}/secret-id`, {}, 200)).body.data.secret_id,
    });
    const ci = await creds('ci');
    const svc = await creds('svc');
    // First logins create the identity entities; after that a batch login writes nothing at all,
    // while a service login stores its token.
    await must('POST', 'auth/approle/login', ci, 200);
    await must('POST', 'auth/approle/login', svc, 200);
    let before = storageBytes().length;
    const auth = (await must('POST', 'auth/approle/login', ci, 200)).body.auth;
    expect(storageBytes().length).toBe(before);
    before = storageBytes().length;
    expect((await must('POST', 'auth/approle/login', svc, 200)).body.auth.token_type).toBe('service');
    expect(storageBytes().length).toBeGreaterThan(before);
    expect(auth.client_token).toMatch(/^hvb\.[A-Za-z0-9_-]+$/);
    expect(auth).toMatchObject({
      accessor: '',
      token_type: 'batch',
      renewable: false,
      orphan: true,
      lease_duration: 2,
      policies: ['default', 'reader'],
    });
    // Usable for requests its policy allows, and for lookup-self.
    await must('POST', 'secret/data/batch', { data: { v: 1 } }, 200, auth.client_token);
    const self = (await must('GET', 'auth/token/lookup-self', undefined, 200, auth.client_token)).body.data;
    expect(self).toMatchObject({
      id: auth.client_token,
      type: 'batch',
      accessor: '',
      renewable: false,
      orphan: true,
      path: 'auth/approle/login',
      role: 'ci',
      num_uses: 0,
      creation_ttl: 2,
    });
    expect(self.entity_id).toBe(auth.entity_id);
    // Its policy still applies: a path outside it is denied.
    expect((await d.req('GET', 'sys/policies/acl/reader', undefined, { token: auth.client_token })).status).toBe(403);
  });

  it("refuses renewal, revocation, child tokens and cubbyholes with Vault's messages", async () => {
    const { client_token: t } = await approleLogin('ci');
    const renew = await d.req('POST', 'auth/token/renew-self', {}, { token: t });
    expect(renew.status).toBe(400);
    expect(renew.body.errors).toEqual(['batch tokens cannot be renewed']);
    const renew2 = await d.req('POST', 'auth/token/renew', { token: t }, { token: rootToken });
    expect(renew2.body.errors).toEqual(['batch tokens cannot be renewed']);
    const revoke = await d.req('POST', 'auth/token/revoke', { token: t }, { token: rootToken });
    expect(revoke.status).toBe(400);
    expect(revoke.body.errors).toEqual(['batch tokens cannot be revoked']);
    const revokeSelf = await d.req('POST', 'auth/token/revoke-self', {}, { token: t });
    expect(revokeSelf.body.errors).toEqual(['batch tokens cannot be revoked']);
    const child = await d.req('POST', 'auth/token/create', { policies: ['default'] }, { token: t });
    expect(child.status).toBe(400);
    expect(child.body.errors).toEqual(['batch tokens cannot create more tokens']);
    const cubby = await d.req('POST', 'cubbyhole/x', { a: 'b' }, { token: t });
    expect(cubby.status).toBe(400);
    expect(cubby.body.errors).toEqual(['cubbyhole operations are only supported by "service" type tokens']);
    // Still valid after all that.
    await must('GET', 'auth/token/lookup-self', undefined, 200, t);
  });

  it('can ask for a wrapped answer (the wrapping token is a service token), and is no wrapping token itself', async () => {
    const { client_token: t } = await approleLogin('ci');
    await must('POST', 'sys/policies/acl/wrapper', {
      policy: 'path "sys/wrapping/wrap" { capabilities = ["update"] }',
    });
    await must('POST', 'auth/approle/role/ci', {
      token_policies: 'reader,wrapper',
      token_type: 'batch',
      token_ttl: '2s',
      token_max_ttl: '1h',
    });
    const { client_token: w } = await approleLogin('ci');
    const wrapped = await d.req(
      'POST',
      'sys/wrapping/wrap',
      { hello: 'batch' },
      { token: w, headers: { 'X-Vault-Wrap-TTL': '60s' } },
    );
    expect(wrapped.status, wrapped.text).toBe(200);
    expect(wrapped.body.wrap_info.token).toMatch(/^hvs\./);
    const un = await d.req('POST', 'sys/wrapping/unwrap', {}, { token: wrapped.body.wrap_info.token });
    expect(un.body.data).toEqual({ hello: 'batch' });
    const notWrap = await d.req('POST', 'sys/wrapping/unwrap', { token: t }, { token: rootToken });
    expect(notWrap.status).toBe(400);
    expect(notWrap.body.errors).toEqual(['wrapping token is not valid or does not exist']);
    await must('POST', 'auth/approle/role/ci', {
      token_policies: 'reader',
      token_type: 'batch',
      token_ttl: '2s',
      token_max_ttl: '1h',
    });
  });

  it('ends at its TTL (403 afterwards)', async () => {
    const { client_token: t } = await approleLogin('ci');
    await must('GET', 'auth/token/lookup-self', undefined, 200, t);
    await new Promise((r) => setTimeout(r, 2300));
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(403);
  });

  it('a mount tuned to token_type=batch issues batch tokens for a role that leaves the type open; "service" forces service', async () => {
    await must('POST', 'sys/auth/approle/tune', { token_type: 'batch' });
    try {
      expect((await approleLogin('svc')).token_type).toBe('batch');
      await must('POST', 'sys/auth/approle/tune', { token_type: 'service' });
      expect((await approleLogin('ci')).token_type).toBe('service');
      await must('POST', 'sys/auth/approle/tune', { token_type: 'default-batch' });
      expect((await approleLogin('svc')).token_type).toBe('batch');
    } finally {
      await must('POST', 'sys/auth/approle/tune', { token_type: 'default-service' });
    }
    expect((await approleLogin('svc')).token_type).toBe('service');
  });

  it('role validation: batch with token_period or token_num_uses is refused', async () => {
    const a = await d.req(
      'POST',
      'auth/approle/role/bad',
      { token_type: 'batch', token_period: '1h' },
      { token: rootToken },
    );
    expect(a.status).toBe(400);
    expect(a.body.errors).toEqual([
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens",
    ]);
    const b = await d.req(
      'POST',
      'auth/approle/role/bad',
      { token_type: 'batch', token_num_uses: 3 },
      { token: rootToken },
    );
    expect(b.body.errors).toEqual([
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
    ]);
  });
});

describe('batch tokens from auth/token/create', () => {
  it('type=batch: usable, lookup by token works, and the field rules of Vault apply', async () => {
    const r = await must(
      'POST',
      'auth/token/create',
      { type: 'batch', policies: ['reader'], ttl: '1h', meta: { team: 'ci' } },
      200,
    );
    expect(r.body.auth).toMatchObject({
      token_type: 'batch',
      accessor: '',
      renewable: false,
      orphan: false,
      metadata: { team: 'ci' },
    });
    const look = (await must('POST', 'auth/token/lookup', { token: r.body.auth.client_token }, 200)).body.data;
    expect(look).toMatchObject({ type: 'batch', meta: { team: 'ci' }, path: 'auth/token/create', creation_ttl: 3600 });
    for (const [field, value] of [
      ['explicit_max_ttl', '1h'],
      ['num_uses', 2],
      ['period', '1h'],
    ] as const) {
      const bad = await d.req(
        'POST',
        'auth/token/create',
        { type: 'batch', policies: ['reader'], [field]: value },
        { token: rootToken },
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([`batch tokens cannot have "${field}" set`]);
    }
    const root = await d.req('POST', 'auth/token/create', { type: 'batch', policies: ['root'] }, { token: rootToken });
    expect(root.status).toBe(400);
    expect(root.body.errors).toEqual(['batch tokens cannot be root tokens']);
    const bogus = await d.req('POST', 'auth/token/create', { type: 'sometimes' }, { token: rootToken });
    expect(bogus.body.errors).toEqual(["invalid 'token_type' value"]);
  });

  it('a batch token with a parent dies with its parent; an orphan one does not', async () => {
    const parent = (await must('POST', 'auth/token/create', { policies: ['reader'], ttl: '1h' }, 200)).body.auth
      .client_token;
    const child = (
      await must('POST', 'auth/token/create', { type: 'batch', policies: ['reader'], ttl: '1h' }, 200, parent)
    ).body.auth;
    expect(child.orphan).toBe(false);
    const orphan = (
      await must('POST', 'auth/token/create-orphan', { type: 'batch', policies: ['reader'], ttl: '1h' }, 200)
    ).body.auth.client_token;
    await must('GET', 'auth/token/lookup-self', undefined, 200, child.client_token);
    await must('POST', 'auth/token/revoke', { token: parent });
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: child.client_token })).status).toBe(403);
    await must('GET', 'auth/token/lookup-self', undefined, 200, orphan);
  });

  it('token roles with token_type batch or default-batch', async () => {
    await must('POST', 'auth/token/roles/ci', { allowed_policies: 'reader', token_type: 'batch', orphan: true });
    expect((await must('GET', 'auth/token/roles/ci', undefined, 200)).body.data.token_type).toBe('batch');
    expect((await must('POST', 'auth/token/create/ci', {}, 200)).body.auth.token_type).toBe('batch');
    // Forced by the role, even when the call asks for service (Vault: the role's type wins).
    expect((await must('POST', 'auth/token/create/ci', { type: 'service' }, 200)).body.auth.token_type).toBe('batch');
    await must('POST', 'auth/token/roles/maybe', { allowed_policies: 'reader', token_type: 'default-batch' });
    expect((await must('POST', 'auth/token/create/maybe', {}, 200)).body.auth.token_type).toBe('batch');
    expect((await must('POST', 'auth/token/create/maybe', { type: 'service' }, 200)).body.auth.token_type).toBe(
      'service',
    );
    const bad = await d.req(
      'POST',
      'auth/token/roles/bad',
      { token_type: 'batch', token_period: '1h' },
      { token: rootToken },
    );
    expect(bad.body.errors).toEqual([
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens",
    ]);
  });
});

describe('batch tokens are checked, not trusted', () => {
  it('tampered, truncated and made-up hvb. tokens are refused (403), and nothing 5xx', async () => {
    const { client_token: t } = await approleLogin('svc-batch-probe').catch(async () => {
      await must('POST', 'auth/approle/role/svc-batch-probe', {
        token_policies: 'reader',
        token_type: 'batch',
        token_ttl: '1h',
      });
      return approleLogin('svc-batch-probe');
    });
    const body = t.slice(4);
    const flip = (i: number) => 'hvb.' + body.slice(0, i) + (body[i] === 'A' ? 'B' : 'A') + body.slice(i + 1);
    for (const bad of [
      flip(2),
      flip(Math.floor(body.length / 2)),
      flip(body.length - 3),
      t.slice(0, -10),
      'hvb.',
      'hvb.AAAA',
      'hvb.' + 'A'.repeat(9000),
      'hvb.!!!',
    ]) {
      const r = await d.req('GET', 'auth/token/lookup-self', undefined, { token: bad });
      expect(r.status, bad.slice(0, 40)).toBe(403);
    }
    await must('GET', 'auth/token/lookup-self', undefined, 200, t);
  });

  it('a batch token stays valid across a restart (the key is kept behind the barrier)', async () => {
    await must('POST', 'auth/approle/role/long', { token_policies: 'reader', token_type: 'batch', token_ttl: '1h' });
    const { client_token: t } = await approleLogin('long');
    await d.stop();
    await boot(d.dir);
    await must('GET', 'auth/token/lookup-self', undefined, 200, t);
    await must('POST', 'secret/data/after-restart', { data: { ok: true } }, 200, t);
  });
});
