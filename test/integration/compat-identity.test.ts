/**
 * Identity endpoints as the Go vault client (api/ and command/ packages, replayed as raw HTTP like
 * compat-vault-cli.test.ts) and hvac send them, with the typed decoding they do:
 * - api/sys_auth.go EnableAuthWithOptions / ListAuth: EnableAuthOptions body, map[string]*AuthMount with
 *   AuthConfigOutput (ints, bools, strings);
 * - command/login.go with -method=approle (api/auth/approle): PUT auth/approle/login, SecretAuth decoded
 *   with metadata as map[string]string;
 * - command/kv_helpers.go on a KV version 1 mount: preflight says options.version "1", so no data/ prefix;
 * - hvac auth_methods/approle.py generate_secret_id(metadata=json.dumps(...)) and jwt.py jwt_login.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ tcp: true });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function goReq(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = 'root',
): Promise<{ status: number; json: any }> {
  const u = new URL(d.tcp!);
  const headers: Record<string, string> = { 'X-Vault-Request': 'true', 'User-Agent': 'Go-http-client/1.1' };
  if (token) headers['X-Vault-Token'] = token;
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  if (payload) headers['Content-Length'] = String(payload.length);
  return new Promise((res, rej) => {
    const r = request({ host: u.hostname, port: u.port, method, path: '/v1/' + path, headers }, (resp) => {
      let t = '';
      resp.on('data', (c: Buffer) => (t += c.toString()));
      resp.on('end', () => res({ status: resp.statusCode ?? 0, json: t ? JSON.parse(t) : null }));
    });
    r.on('error', rej);
    r.end(payload);
  });
}

const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);

describe('Go api: sys/auth', () => {
  it('vault auth enable approle (EnableAuthOptions with zero values) then vault auth list decodes typed mounts', async () => {
    const en = await goReq('POST', 'sys/auth/approle', {
      type: 'approle',
      description: '',
      config: { default_lease_ttl: '', max_lease_ttl: '', force_no_cache: false, token_type: '' },
      local: false,
      seal_wrap: false,
      external_entropy_access: false,
      options: null,
    });
    expect(en.status, JSON.stringify(en.json)).toBe(204);
    const list = await goReq('GET', 'sys/auth');
    for (const [path, m] of Object.entries(list.json.data as Record<string, Record<string, unknown>>)) {
      expect(path.endsWith('/')).toBe(true);
      for (const k of ['type', 'description', 'accessor', 'uuid', 'plugin_version', 'running_plugin_version'])
        expect(typeof m[k], `${path}.${k}`).toBe('string');
      for (const k of ['local', 'seal_wrap', 'external_entropy_access']) expect(typeof m[k]).toBe('boolean');
      const c = m.config as Record<string, unknown>;
      expect(
        isInt(c.default_lease_ttl) &&
          isInt(c.max_lease_ttl) &&
          typeof c.force_no_cache === 'boolean' &&
          typeof c.token_type === 'string',
      ).toBe(true);
    }
  });

  it('vault login -method=approle: PUT auth/approle/login, SecretAuth typed (metadata map[string]string)', async () => {
    await goReq('PUT', 'auth/approle/role/go', {
      token_policies: ['default'],
      secret_id_ttl: '10m0s',
      token_ttl: '20m0s',
    });
    const rid = (await goReq('GET', 'auth/approle/role/go/role-id')).json.data.role_id;
    const sid = (await goReq('PUT', 'auth/approle/role/go/secret-id', null)).json.data.secret_id;
    const r = await goReq('PUT', 'auth/approle/login', { role_id: rid, secret_id: sid }, null);
    expect(r.status).toBe(200);
    const a = r.json.auth;
    expect(
      typeof a.client_token === 'string' &&
        typeof a.accessor === 'string' &&
        isInt(a.lease_duration) &&
        typeof a.renewable === 'boolean' &&
        typeof a.orphan === 'boolean' &&
        isInt(a.num_uses) &&
        typeof a.entity_id === 'string',
    ).toBe(true);
    for (const v of Object.values(a.metadata)) expect(typeof v).toBe('string');
    expect(a.lease_duration).toBe(1200);
  });
});

describe('vault kv on a KV version 1 mount', () => {
  it('preflight reports version "1"; put and get use the plain path', async () => {
    await goReq('POST', 'sys/mounts/old', { type: 'kv', options: { version: '1' } });
    const pre = await goReq('GET', 'sys/internal/ui/mounts/old/foo');
    expect(pre.json.data.options).toEqual({ version: '1' });
    expect(pre.json.data.path).toBe('old/');
    expect((await goReq('PUT', 'old/foo', { bar: 'baz' })).status).toBe(204);
    const got = await goReq('GET', 'old/foo');
    expect(got.json.data).toEqual({ bar: 'baz' });
    expect(isInt(got.json.lease_duration)).toBe(true);
  });
});

describe('hvac', () => {
  it('generate_secret_id(metadata=json.dumps(...)) and read_secret_id', async () => {
    const r = await goReq('POST', 'auth/approle/role/go/secret-id', { metadata: JSON.stringify({ team: 'billing' }) });
    expect(r.status).toBe(200);
    const look = await goReq('POST', 'auth/approle/role/go/secret-id/lookup', { secret_id: r.json.data.secret_id });
    expect(look.json.data.metadata).toEqual({ team: 'billing' });
    expect(look.json.data.expiration_time).not.toBe('0001-01-01T00:00:00Z');
  });
});
