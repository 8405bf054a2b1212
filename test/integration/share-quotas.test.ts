/**
 * Issue 28 part 1 against the real daemon: rate-limit quotas (CRUD, Vault's 429 text and headers,
 * the most specific quota wins, exempt paths, block_interval, role quotas on a login path), and a
 * client above its limit refused while another client on another path keeps its full rate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, httpReq, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;

async function must(method: string, path: string, body?: unknown, status = 204, token?: string) {
  const r = await d.req(method, path, body, token ? { token } : undefined);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}
const pt = Buffer.from('hello').toString('base64');
const encrypt = (key: string) =>
  httpReq({ base: d.tcp }, 'POST', `transit/encrypt/${key}`, { plaintext: pt }, { token: d.token });

beforeAll(async () => {
  d = await startDaemon({ tcp: true });
  await must('POST', 'sys/mounts/other', { type: 'transit' });
  await must('POST', 'transit/keys/a', {}, 200);
  await must('POST', 'transit/keys/b', {}, 200);
  await must('POST', 'other/keys/c', {}, 200);
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('sys/quotas', () => {
  it('writes, reads, lists and deletes a rate-limit quota; refuses bad fields naming them', async () => {
    await must('POST', 'sys/quotas/rate-limit/q1', { path: 'transit/', rate: 1000, interval: '2s' });
    const r = await must('GET', 'sys/quotas/rate-limit/q1', undefined, 200);
    expect(r.body.data).toEqual({
      name: 'q1',
      type: 'rate-limit',
      path: 'transit/',
      role: '',
      rate: 1000,
      interval: 2,
      block_interval: 0,
      inheritable: false,
    });
    expect((await must('LIST', 'sys/quotas/rate-limit', undefined, 200)).body.data.keys).toEqual(['q1']);
    for (const [body, field] of [
      [{ rate: 0 }, 'rate'],
      [{ rate: 'x' }, 'rate'],
      [{ rate: 1, interval: 'soon' }, 'interval'],
      [{ rate: 1, block_interval: '-1s' }, 'block_interval'],
      [{ rate: 1, path: 'nowhere/' }, 'path'],
      [{ rate: 1, path: 'transit/', role: 'r' }, 'role'],
      [{ rate: 1, path: 'transit/', inheritable: true }, 'inheritable'],
    ] as const) {
      const bad = await d.req('POST', 'sys/quotas/rate-limit/bad', body);
      expect(bad.status, JSON.stringify(body) + bad.text).toBe(400);
      expect(bad.body.errors[0]).toMatch(new RegExp(`^${field}: `));
    }
    const dup = await d.req('POST', 'sys/quotas/rate-limit/q2', { path: 'transit', rate: 5 });
    expect(dup.status).toBe(400);
    expect(dup.body.errors[0]).toContain('q1');
    const warn = await must('POST', 'sys/quotas/rate-limit/q1', { rate: 1000, bogus: 1 }, 200);
    expect(warn.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus]']);
    await must('DELETE', 'sys/quotas/rate-limit/q1');
    expect((await d.req('GET', 'sys/quotas/rate-limit/q1')).status).toBe(404);
  });

  it('reads and writes the quota config with Vault default exempt paths', async () => {
    const c = await must('GET', 'sys/quotas/config', undefined, 200);
    expect(c.body.data).toMatchObject({
      enable_rate_limit_audit_logging: false,
      enable_rate_limit_response_headers: false,
    });
    expect(c.body.data.rate_limit_exempt_paths).toContain('sys/health');
  });

  it('refuses a client over the limit with 429 and Vault text and headers, while another path keeps its full rate', async () => {
    await must('POST', 'sys/quotas/config', { enable_rate_limit_response_headers: true });
    // A tight quota on one key's path; the other mount has none.
    await must('POST', 'sys/quotas/rate-limit/tight', { path: 'transit/encrypt/a', rate: 5, interval: '1m' });
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 8; i++) {
      last = await encrypt('a');
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
    expect(last!.body.errors).toEqual(['request path "transit/encrypt/a": rate limit quota exceeded']);
    expect(last!.headers['x-ratelimit-limit']).toBe('5');
    expect(last!.headers['x-ratelimit-remaining']).toBe('0');
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    // While client A keeps hammering its limited path (and is refused), client B on another path
    // (another key under the same mount, and another mount) is never refused: the same number of
    // requests all succeed, at the same time.
    const hammer = async () => {
      const codes: number[] = [];
      for (let i = 0; i < 40; i++) codes.push((await encrypt('a')).status);
      return codes;
    };
    const other = async () => {
      const codes: number[] = [];
      for (let i = 0; i < 40; i++) {
        codes.push((await encrypt('b')).status);
        codes.push(
          (await httpReq({ base: d.tcp }, 'POST', 'other/encrypt/c', { plaintext: pt }, { token: d.token })).status,
        );
      }
      return codes;
    };
    const [a, b] = await Promise.all([hammer(), other()]);
    expect(a.every((c) => c === 429)).toBe(true);
    expect(b.every((c) => c === 200)).toBe(true);
    // Exempt paths are never limited, even under a global quota of 1.
    await must('POST', 'sys/quotas/rate-limit/global', { rate: 1, interval: '1m' });
    for (let i = 0; i < 5; i++)
      expect((await httpReq({ base: d.tcp }, 'GET', 'sys/health', undefined, { token: null })).status).toBe(200);
    await must('DELETE', 'sys/quotas/rate-limit/global');
    await must('DELETE', 'sys/quotas/rate-limit/tight');
    expect((await encrypt('a')).status).toBe(200);
  });

  it('picks the most specific quota: exact path over prefix over mount', async () => {
    await must('POST', 'sys/quotas/rate-limit/mountwide', { path: 'transit', rate: 2, interval: '1m' });
    await must('POST', 'sys/quotas/rate-limit/prefix', { path: 'transit/encrypt/*', rate: 4, interval: '1m' });
    const codes = async (n: number, key: string) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await encrypt(key)).status);
      return out;
    };
    expect(await codes(5, 'a')).toEqual([200, 200, 200, 200, 429]);
    const k = await httpReq({ base: d.tcp }, 'GET', 'transit/keys/a', undefined, { token: d.token });
    expect(k.status).toBe(200);
    for (const n of ['mountwide', 'prefix']) await must('DELETE', `sys/quotas/rate-limit/${n}`);
  });

  it('blocks a client for block_interval after it goes over', async () => {
    await must('POST', 'sys/quotas/rate-limit/blocker', {
      path: 'other/',
      rate: 1,
      interval: '1s',
      block_interval: '1m',
    });
    const call = () => httpReq({ base: d.tcp }, 'POST', 'other/encrypt/c', { plaintext: pt }, { token: d.token });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(429);
    await new Promise((r) => setTimeout(r, 1100));
    const still = await call();
    expect(still.status).toBe(429);
    expect(Number(still.headers['retry-after'])).toBeGreaterThan(50);
    await must('DELETE', 'sys/quotas/rate-limit/blocker');
  });

  it('limits logins of one AppRole role only (role quota)', async () => {
    await must('POST', 'sys/auth/approle', { type: 'approle' });
    const creds = async (role: string) => {
      await must('POST', `auth/approle/role/${role}`, { secret_id_num_uses: 0 });
      const roleId = (await must('GET', `auth/approle/role/${role}/role-id`, undefined, 200)).body.data.role_id;
      const secretId = (await must('POST', `auth/approle/role/${role}/secret-id`, {}, 200)).body.data.secret_id;
      return { role_id: roleId, secret_id: secretId };
    };
    const slow = await creds('slow');
    const fast = await creds('fast');
    await must('POST', 'sys/quotas/rate-limit/slowrole', {
      path: 'auth/approle',
      role: 'slow',
      rate: 2,
      interval: '1m',
    });
    const login = (body: unknown) => httpReq({ base: d.tcp }, 'POST', 'auth/approle/login', body, { token: null });
    expect([(await login(slow)).status, (await login(slow)).status, (await login(slow)).status]).toEqual([
      200, 200, 429,
    ]);
    for (let i = 0; i < 5; i++) expect((await login(fast)).status).toBe(200);
    await must('DELETE', 'sys/quotas/rate-limit/slowrole');
  });

  it('limits JWT logins of the default role when the login names none', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await must('POST', 'sys/auth/jwt', { type: 'jwt' });
    await must('POST', 'auth/jwt/config', {
      jwt_validation_pubkeys: [publicKey.export({ type: 'spki', format: 'pem' })],
      default_role: 'dev',
    });
    await must('POST', 'auth/jwt/role/dev', { role_type: 'jwt', user_claim: 'sub', bound_claims: { sub: 'x' } });
    await must('POST', 'auth/jwt/role/ops', { role_type: 'jwt', user_claim: 'sub', bound_claims: { sub: 'x' } });
    await must('POST', 'sys/quotas/rate-limit/devrole', { path: 'auth/jwt', role: 'dev', rate: 2, interval: '1m' });
    const login = (body: unknown) => httpReq({ base: d.tcp }, 'POST', 'auth/jwt/login', body, { token: null });
    // The JWT is not valid (400): the quota counts the attempts all the same, before the method runs.
    expect([
      (await login({ jwt: 'not.a.jwt' })).status,
      (await login({ jwt: 'not.a.jwt' })).status,
      (await login({ jwt: 'not.a.jwt' })).status,
    ]).toEqual([400, 400, 429]);
    expect((await login({ role: 'dev', jwt: 'not.a.jwt' })).status).toBe(429);
    for (let i = 0; i < 4; i++) expect((await login({ role: 'ops', jwt: 'not.a.jwt' })).status).toBe(400);
    await must('DELETE', 'sys/quotas/rate-limit/devrole');
  });

  it('follows a mount moved with sys/remount', async () => {
    await must('POST', 'sys/mounts/movq', { type: 'transit' });
    await must('POST', 'sys/quotas/rate-limit/movq', { path: 'movq/', rate: 3 });
    await must('POST', 'sys/remount', { from: 'movq', to: 'movq2' }, 200);
    expect((await must('GET', 'sys/quotas/rate-limit/movq', undefined, 200)).body.data.path).toBe('movq2/');
  });

  it('keyhold quota write|list|read|delete and keyhold write sys/quotas/rate-limit/NAME work', async () => {
    let r = await d.cli(['quota', 'write', 'cliq', 'path=other/', 'rate=100', 'interval=1m']);
    expect(r.exitCode, r.stderr).toBe(0);
    r = await d.cli(['write', 'sys/quotas/rate-limit/cliq2', 'path=transit/keys/*', 'rate=50']);
    expect(r.exitCode, r.stderr).toBe(0);
    r = await d.cli(['quota', 'list']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/cliq\s+other\/\s+100\s+60s/);
    expect(r.stdout).toMatch(/cliq2\s+transit\/keys\/\*\s+50\s+1s/);
    r = await d.cli(['quota', 'read', 'cliq', '--format', 'json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'cliq', path: 'other/', rate: 100, interval: 60 });
    const bad = await d.cli(['quota', 'write', 'cliq', 'rate=-1']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('rate');
    for (const n of ['cliq', 'cliq2']) expect((await d.cli(['quota', 'delete', n])).exitCode).toBe(0);
    expect((await d.cli(['quota', 'list'])).stdout).not.toContain('cliq');
  });

  it('audits refused requests when enable_rate_limit_audit_logging is on', async () => {
    const { readFileSync } = await import('node:fs');
    const file = `${d.dir}/quota-audit.log`;
    await must('PUT', 'sys/audit/qfile', { type: 'file', options: { file_path: file } });
    await must('POST', 'sys/quotas/config', { enable_rate_limit_audit_logging: true });
    await must('POST', 'sys/quotas/rate-limit/audited', { path: 'transit/encrypt/b', rate: 1, interval: '1m' });
    expect((await encrypt('b')).status).toBe(200);
    expect((await encrypt('b')).status).toBe(429);
    // The refusal is answered first and audited right after (as Vault does).
    const refusedEntry = () =>
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((e) => e.type === 'response' && e.response?.status === 429);
    for (let i = 0; i < 100 && !refusedEntry(); i++) await new Promise((r) => setTimeout(r, 20));
    const refused = refusedEntry();
    expect(refused.request.path).toBe('transit/encrypt/b');
    expect(refused.error).toBe('request path "transit/encrypt/b": rate limit quota exceeded');
    await must('DELETE', 'sys/quotas/rate-limit/audited');
    await must('POST', 'sys/quotas/config', { enable_rate_limit_audit_logging: false });
    await must('DELETE', 'sys/audit/qfile');
  });
});
