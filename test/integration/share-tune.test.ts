/**
 * Issue 28 part 2 against the real daemon: every tune field is checked and takes effect (KV v1
 * lease_duration, auth mount TTLs bounding tokens, audit keys in clear, listing visibility), a
 * malformed value is a 400 naming the field, an unknown field is warned about, and sys/remount moves
 * a secrets engine or an auth method with its data (hvac's test_mount.py / test_auth.py steps).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;

async function must(method: string, path: string, body?: unknown, status = 204, token?: string) {
  const r = await d.req(method, path, body, token ? { token } : undefined);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  d = await startDaemon();
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('sys/mounts/:path/tune', () => {
  it('reads system TTLs, tunes them (hvac test_mount), and a KV v1 read carries the tuned lease_duration', async () => {
    await must('POST', 'sys/mounts/test', { type: 'generic' });
    let t = await must('GET', 'sys/mounts/test/tune', undefined, 200);
    expect(t.body.data).toMatchObject({ default_lease_ttl: 2764800, max_lease_ttl: 2764800 });
    await must('POST', 'test/a', { v: '1' });
    expect((await must('GET', 'test/a', undefined, 200)).body.lease_duration).toBe(2764800);
    await must('POST', 'sys/mounts/test/tune', { default_lease_ttl: '3600s', max_lease_ttl: '8600s' });
    t = await must('GET', 'sys/mounts/test/tune', undefined, 200);
    expect(t.body.data).toMatchObject({ default_lease_ttl: 3600, max_lease_ttl: 8600 });
    expect((await must('GET', 'sys/mounts', undefined, 200)).body.data['test/'].config).toMatchObject({
      default_lease_ttl: 3600,
      max_lease_ttl: 8600,
    });
    expect((await must('GET', 'test/a', undefined, 200)).body.lease_duration).toBe(3600);
    // A ttl key above the mount's max is capped to it.
    await must('POST', 'test/b', { v: '1', ttl: '10h' });
    expect((await must('GET', 'test/b', undefined, 200)).body.lease_duration).toBe(8600);
  });

  it('answers 400 naming the field for a malformed value, and warns of unknown fields (the issue example)', async () => {
    await must('POST', 'sys/mounts/kv1', { type: 'kv', options: { version: '1' } });
    const bad = await d.req('POST', 'sys/mounts/kv1/tune', { max_lease_ttl: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^max_lease_ttl: /);
    for (const [field, value] of [
      ['listing_visibility', 'everyone'],
      ['audit_non_hmac_request_keys', { a: 1 }],
      ['passthrough_request_headers', ['bad header']],
      ['plugin_version', 'v9.9.9'],
      ['default_lease_ttl', -5],
    ] as const) {
      const r = await d.req('POST', 'sys/mounts/kv1/tune', { [field]: value });
      expect(r.status, `${field}: ${r.text}`).toBe(400);
      expect(r.body.errors[0]).toContain(field);
    }
    const r = await d.req('POST', 'sys/mounts/kv1/tune', { max_lease_ttl: '8600s', bogus_field: 'x' });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus_field]']);
    expect((await must('GET', 'sys/mounts/kv1/tune', undefined, 200)).body.data.max_lease_ttl).toBe(8600);
    const order = await d.req('POST', 'sys/mounts/kv1/tune', { default_lease_ttl: '9000s' });
    expect(order.status).toBe(400);
    expect(order.body.errors).toEqual(['given default lease TTL greater than given max lease TTL']);
  });

  it('keeps list settings and shows them; audit devices log the listed keys in clear and hash the rest', async () => {
    const log = join(d.dir, 'audit-tune.log');
    await must('PUT', 'sys/audit/tunefile', { type: 'file', options: { file_path: log } });
    try {
      await must('POST', 'sys/mounts/kv1/tune', {
        audit_non_hmac_request_keys: ['team'],
        audit_non_hmac_response_keys: 'team',
        listing_visibility: 'unauth',
        passthrough_request_headers: ['X-Custom'],
        allowed_response_headers: ['X-Other'],
      });
      const t = (await must('GET', 'sys/mounts/kv1/tune', undefined, 200)).body.data;
      expect(t).toMatchObject({
        audit_non_hmac_request_keys: ['team'],
        audit_non_hmac_response_keys: ['team'],
        listing_visibility: 'unauth',
        passthrough_request_headers: ['x-custom'],
        allowed_response_headers: ['x-other'],
      });
      await must('POST', 'kv1/s', { team: 'payments', password: 'hunter2' });
      await must('GET', 'kv1/s', undefined, 200);
      const lines = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const req = lines.find(
        (l) => l.type === 'request' && l.request.path === 'kv1/s' && l.request.operation !== 'read',
      );
      expect(req.request.data.team).toBe('payments');
      expect(req.request.data.password).toMatch(/^hmac-sha256:/);
      const resp = lines.find(
        (l) => l.type === 'response' && l.request.path === 'kv1/s' && l.request.operation === 'read',
      );
      expect(resp.response.data.team).toBe('payments');
      expect(resp.response.data.password).toMatch(/^hmac-sha256:/);
      expect(readFileSync(log, 'utf8')).not.toContain('hunter2');
      // listing_visibility "unauth": the mount is listed to a caller without a token.
      const ui = await d.req('GET', 'sys/internal/ui/mounts', undefined, { token: null });
      expect(ui.status).toBe(200);
    } finally {
      await must('DELETE', 'sys/audit/tunefile');
    }
  });

  it('upgrades KV v1 to v2 in place with options.version', async () => {
    await must('POST', 'sys/mounts/up', { type: 'kv', options: { version: '1' } });
    await must('POST', 'up/x', { a: 'b' });
    const r = await must('POST', 'sys/mounts/up/tune', { options: { version: '2' } }, 200);
    expect(r.body.warnings[0]).toMatch(/Upgrading mount from version 1 to version 2/);
    expect((await must('GET', 'up/data/x', undefined, 200)).body.data.data).toEqual({ a: 'b' });
  });
});

describe('sys/auth/:path/tune', () => {
  it('tunes TTLs (hvac test_auth: a max above the system max is kept) and the tuned max bounds login tokens', async () => {
    await must('POST', 'sys/auth/svc', { type: 'approle' });
    await must('POST', 'sys/auth/svc/tune', { description: 'this is a test auth backend', max_lease_ttl: 12345678 });
    expect((await must('GET', 'sys/auth/svc/tune', undefined, 200)).body.data.max_lease_ttl).toBe(12345678);
    await must('POST', 'sys/auth/svc/tune', { default_lease_ttl: '10m', max_lease_ttl: '20m' });
    await must('POST', 'auth/svc/role/r', { token_ttl: '1h' });
    const roleId = (await must('GET', 'auth/svc/role/r/role-id', undefined, 200)).body.data.role_id;
    const secretId = (await must('POST', 'auth/svc/role/r/secret-id', {}, 200)).body.data.secret_id;
    const login = await d.req('POST', 'auth/svc/login', { role_id: roleId, secret_id: secretId }, { token: null });
    expect(login.status).toBe(200);
    expect(login.body.auth.lease_duration).toBe(1200);
    const bad = await d.req('POST', 'sys/auth/svc/tune', { listing_visibility: 7 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('listing_visibility');
    const warn = await d.req('POST', 'sys/auth/svc/tune', { description: 'x', nonsense: 1 });
    expect(warn.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [nonsense]']);
  });
});

describe('sys/remount', () => {
  it('moves a secrets engine with its data and answers a migration id whose status is success (hvac move_backend)', async () => {
    await must('POST', 'sys/mounts/from1', { type: 'kv', options: { version: '2' } });
    await must('POST', 'from1/data/s', { data: { k: 'v' } }, 200);
    const r = await must('POST', 'sys/remount', { from: 'from1', to: 'to1' }, 200);
    const id = r.body.data.migration_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const st = await must('GET', `sys/remount/status/${id}`, undefined, 200);
    expect(st.body.data).toEqual({
      migration_id: id,
      migration_info: { source_mount: 'from1/', target_mount: 'to1/', status: 'success' },
    });
    const mounts = (await must('GET', 'sys/mounts', undefined, 200)).body.data;
    expect(mounts['from1/']).toBeUndefined();
    expect(mounts['to1/']).toBeDefined();
    expect((await must('GET', 'to1/data/s', undefined, 200)).body.data.data).toEqual({ k: 'v' });
    expect((await d.req('GET', 'from1/data/s')).status).toBe(404);
  });

  it('moves an auth method; its tokens keep working', async () => {
    await must('POST', 'sys/auth/movable', { type: 'approle' });
    await must('POST', 'auth/movable/role/r', {});
    const roleId = (await must('GET', 'auth/movable/role/r/role-id', undefined, 200)).body.data.role_id;
    const secretId = (await must('POST', 'auth/movable/role/r/secret-id', {}, 200)).body.data.secret_id;
    const tok = (await d.req('POST', 'auth/movable/login', { role_id: roleId, secret_id: secretId }, { token: null }))
      .body.auth.client_token;
    await must('POST', 'sys/remount', { from: 'auth/movable', to: 'auth/moved' }, 200);
    expect((await must('GET', 'sys/auth', undefined, 200)).body.data['moved/']).toBeDefined();
    expect((await d.req('GET', 'auth/moved/role/r/role-id')).status).toBe(200);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: tok })).status).toBe(200);
  });

  it('refuses protected paths, auth <-> secrets moves, unknown sources and used targets, naming the field', async () => {
    await must('POST', 'sys/mounts/busy', { type: 'transit' });
    await must('POST', 'sys/mounts/src2', { type: 'transit' });
    for (const [body, field] of [
      [{ from: 'sys', to: 'x' }, 'from'],
      [{ from: 'cubbyhole', to: 'x' }, 'from'],
      [{ from: 'auth/token', to: 'auth/t2' }, 'from'],
      [{ from: 'src2', to: 'identity' }, 'to'],
      [{ from: 'src2', to: 'auth/x' }, 'to'],
      [{ from: 'auth/moved', to: 'plain' }, 'to'],
      [{ from: 'nothere', to: 'x' }, 'from'],
      [{ from: 'src2', to: 'busy' }, 'to'],
      [{ from: 'src2', to: 'busy/inner' }, 'to'],
      [{ from: 'src2' }, 'to'],
    ] as const) {
      const r = await d.req('POST', 'sys/remount', body);
      expect(r.status, JSON.stringify(body) + r.text).toBe(400);
      expect(r.body.errors[0]).toMatch(new RegExp(`^${field}: `));
    }
  });
});
