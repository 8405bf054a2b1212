/**
 * Issue 33 against a real daemon on file storage: the token lifecycle rules hold under concurrency,
 * restarts and expiry. Each test is one finding of the adversarial review, tried as it was found:
 * (1) TTL defaults and caps for non-root callers, (2) a parent's expiry revokes its children with
 * nobody looking the parent up, also across a restart, (3) an expired token stays gone through its
 * accessor, (4) a wrapping token unwraps exactly once among 20 simultaneous unwraps after a restart,
 * (5) a num_uses token serves exactly num_uses of 20 simultaneous requests after a restart,
 * (6) a batch token has one spelling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const MAX = 768 * 3600;
let d: Daemon;
let dir: string;
let recoveryKey: string;
let root: string;

async function boot(existing?: string): Promise<void> {
  d = await startDaemon({ dev: false, dir: existing, args: ['--keychain', 'none'] });
  dir = d.dir;
  if (!existing) {
    const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
    expect(init.status, init.text).toBe(200);
    recoveryKey = init.body.keys[0];
    root = init.body.root_token;
  }
  expect((await d.req('POST', 'sys/unseal', { key: recoveryKey }, { token: null })).status).toBe(200);
}

async function restart(): Promise<void> {
  await d.stop();
  await boot(dir);
}

async function must(method: string, path: string, body?: unknown, status = 200, token = root) {
  const r = await d.req(method, path, body, { token });
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Count answers by status. */
function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

beforeAll(async () => {
  await boot();
  await must(
    'POST',
    'sys/policies/acl/p1',
    { policy: 'path "auth/token/create" { capabilities = ["update"] }\npath "secret/*" { capabilities = ["read"] }' },
    204,
  );
  await must('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '1' } }, 204);
  await must('POST', 'secret/x', { v: '1' }, 204);
}, 60_000);

afterAll(async () => {
  await d?.stop();
  if (dir) cleanup(dir);
});

describe('1. TTL defaults and caps', () => {
  it('a non-root caller asking for ttl 0 gets the mount default (768h), not a token that never expires', async () => {
    const caller = (await must('POST', 'auth/token/create', { policies: ['p1'] })).body.auth.client_token;
    const r = await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '0' }, 200, caller);
    expect(r.body.auth.lease_duration).toBe(MAX);
    const look = await must('POST', 'auth/token/lookup', { token: r.body.auth.client_token });
    expect(look.body.data.expire_time).toEqual(expect.any(String));
    expect(look.body.data.ttl).toBeGreaterThan(MAX - 60);
  });

  it('a longer ttl is capped at the mount max with a warning', async () => {
    const caller = (await must('POST', 'auth/token/create', { policies: ['p1'] })).body.auth.client_token;
    const r = await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '100000h' }, 200, caller);
    expect(r.body.auth.lease_duration).toBe(MAX);
    expect(r.body.warnings.join('\n')).toMatch(/exceeded the effective max_ttl.*capped/);
    // Root is capped too when it asks for a TTL (Vault's CalculateTTL applies to every TTL).
    const byRoot = await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '100000h' });
    expect(byRoot.body.auth.lease_duration).toBe(MAX);
  });

  it('only root gets a token without expiry, and only a root-policy token without a TTL', async () => {
    const child = await must('POST', 'auth/token/create', { policies: ['root'] });
    expect(child.body.auth.lease_duration).toBe(0);
    const nonRoot = await must('POST', 'auth/token/create', { policies: ['p1'] });
    expect(nonRoot.body.auth.lease_duration).toBe(MAX);
    // An expiring root token cannot mint a non-expiring one (Vault's rule).
    const expiringRoot = (await must('POST', 'auth/token/create', { policies: ['root'], ttl: '1h' })).body.auth
      .client_token;
    const refused = await d.req('POST', 'auth/token/create', { policies: ['root'] }, { token: expiringRoot });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('expiring root tokens cannot create non-expiring root tokens');
  });

  it('the auth/token mount tuning is the default and the max', async () => {
    await must('POST', 'sys/auth/token/tune', { default_lease_ttl: '1h', max_lease_ttl: '2h' }, 204);
    try {
      const caller = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '30m' })).body.auth.client_token;
      expect(
        (await must('POST', 'auth/token/create', { policies: ['p1'] }, 200, caller)).body.auth.lease_duration,
      ).toBe(3600);
      expect(
        (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '5h' }, 200, caller)).body.auth
          .lease_duration,
      ).toBe(7200);
    } finally {
      await must('POST', 'sys/auth/token/tune', { default_lease_ttl: '768h', max_lease_ttl: '768h' }, 204);
    }
  });

  it('AppRole logins follow the same rules (token_ttl 0 is the default; a longer one is capped)', async () => {
    await must('POST', 'sys/auth/approle', { type: 'approle' }, 204);
    await must('POST', 'auth/approle/role/r', { token_policies: 'p1', token_ttl: '0', token_max_ttl: '0' }, 204);
    const roleId = (await must('GET', 'auth/approle/role/r/role-id')).body.data.role_id;
    const secretId = (await must('POST', 'auth/approle/role/r/secret-id', {})).body.data.secret_id;
    const login = await d.req('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null });
    expect(login.status, login.text).toBe(200);
    expect(login.body.auth.lease_duration).toBe(MAX);
  });
});

describe('2. expiry revokes and cascades', () => {
  it('a 1h child of a 3s parent stops working when the parent expires, with nobody looking the parent up', async () => {
    const parent = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '3s' })).body.auth;
    const child = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '1h' }, 200, parent.client_token))
      .body.auth;
    expect((await d.req('GET', 'secret/x', undefined, { token: child.client_token })).status).toBe(200);
    await sleep(4000);
    // The child is gone, and so is its accessor (revoked, not merely refused).
    expect((await d.req('GET', 'secret/x', undefined, { token: child.client_token })).status).toBe(403);
    expect(
      (await d.req('POST', 'auth/token/lookup-accessor', { accessor: child.accessor }, { token: root })).status,
    ).toBe(400);
    expect(
      (await d.req('POST', 'auth/token/lookup-accessor', { accessor: parent.accessor }, { token: root })).status,
    ).toBe(400);
  });

  it('the same holds when the parent expires while the daemon is down', async () => {
    const parent = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '3s' })).body.auth;
    const child = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '1h' }, 200, parent.client_token))
      .body.auth;
    const grandchild = (
      await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '1h' }, 200, child.client_token)
    ).body.auth;
    await d.stop();
    await sleep(3500);
    await boot(dir);
    expect((await d.req('GET', 'secret/x', undefined, { token: grandchild.client_token })).status).toBe(403);
    expect((await d.req('GET', 'secret/x', undefined, { token: child.client_token })).status).toBe(403);
    expect(
      (await d.req('POST', 'auth/token/lookup-accessor', { accessor: child.accessor }, { token: root })).status,
    ).toBe(400);
  });

  it('after a restart, expiry still runs on its own (scheduled from storage)', async () => {
    const parent = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '4s' })).body.auth;
    const child = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '1h' }, 200, parent.client_token))
      .body.auth;
    await restart();
    // The child is used (and cached) before the parent expires; the timer must still revoke it.
    expect((await d.req('GET', 'secret/x', undefined, { token: child.client_token })).status).toBe(200);
    await sleep(4500);
    expect((await d.req('GET', 'secret/x', undefined, { token: child.client_token })).status).toBe(403);
  });
});

describe('3. an expired token stays gone', () => {
  it('renew-accessor, lookup-accessor and use of an expired token fail as for a revoked one', async () => {
    const t = (await must('POST', 'auth/token/create', { policies: ['p1'], ttl: '2s' })).body.auth;
    await sleep(2600);
    const renew = await d.req('POST', 'auth/token/renew-accessor', { accessor: t.accessor }, { token: root });
    expect(renew.status).toBe(400);
    expect((await d.req('GET', 'secret/x', undefined, { token: t.client_token })).status).toBe(403);
    expect((await d.req('POST', 'auth/token/lookup-accessor', { accessor: t.accessor }, { token: root })).status).toBe(
      400,
    );
    expect((await d.req('POST', 'auth/token/renew', { token: t.client_token }, { token: root })).status).toBe(400);
  });
});

describe('4. a wrapping token unwraps exactly once', () => {
  it('20 simultaneous unwraps of each of 8 tokens after a restart: exactly one answer each', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 8; i++) {
      const w = await d.req(
        'POST',
        'sys/wrapping/wrap',
        { secret: `s${i}` },
        { token: root, headers: { 'X-Vault-Wrap-TTL': '5m' } },
      );
      expect(w.status, w.text).toBe(200);
      tokens.push(w.body.wrap_info.token);
    }
    await restart();
    for (const [i, wt] of tokens.entries()) {
      // Half name the token in the header (the wrapping token itself), half in the body (a third party).
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          k % 2
            ? d.req('POST', 'sys/wrapping/unwrap', {}, { token: wt })
            : d.req('POST', 'sys/wrapping/unwrap', { token: wt }, { token: root }),
        ),
      );
      const ok = answers.filter((a) => a.status === 200);
      expect(tally(answers.map((a) => a.status)), `token ${i}`).toEqual({ 200: 1, 400: 19 });
      expect(ok[0]!.body.data).toEqual({ secret: `s${i}` });
    }
  });
});

describe('5. num_uses holds under concurrency', () => {
  it('a num_uses=1 token serves exactly one of 20 simultaneous requests (8 tokens, after a restart)', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 8; i++)
      tokens.push((await must('POST', 'auth/token/create', { policies: ['p1'], num_uses: 1 })).body.auth.client_token);
    await restart();
    for (const t of tokens) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => d.req('GET', 'secret/x', undefined, { token: t })),
      );
      expect(tally(answers.map((a) => a.status))).toEqual({ 200: 1, 403: 19 });
    }
  });

  it('a num_uses=3 token serves exactly three of 20 simultaneous requests', async () => {
    for (let i = 0; i < 4; i++) {
      const t = (await must('POST', 'auth/token/create', { policies: ['p1'], num_uses: 3 })).body.auth.client_token;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => d.req('GET', 'secret/x', undefined, { token: t })),
      );
      expect(tally(answers.map((a) => a.status))).toEqual({ 200: 3, 403: 17 });
    }
  });
});

describe('6. a batch token has one spelling', () => {
  it('a character appended to a batch token, or changed padding bits, is refused', async () => {
    const b = (await must('POST', 'auth/token/create', { policies: ['p1'], type: 'batch', ttl: '1h' })).body.auth
      .client_token as string;
    expect((await d.req('GET', 'secret/x', undefined, { token: b })).status).toBe(200);
    for (const extra of ['A', 'Q', 'g', '_'])
      expect((await d.req('GET', 'secret/x', undefined, { token: b + extra })).status).toBe(403);
    // The last character carries unused low bits unless the body is a multiple of 3 bytes: setting
    // them gives a second spelling of the same bytes, which must be refused too.
    const body = b.slice(4);
    if (body.length % 4 !== 0) {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(body.at(-1)!);
      const twin = 'hvb.' + body.slice(0, -1) + alphabet[last | 1];
      if (twin !== b) {
        expect(Buffer.from(twin.slice(4), 'base64url').equals(Buffer.from(body, 'base64url'))).toBe(true);
        expect((await d.req('GET', 'secret/x', undefined, { token: twin })).status).toBe(403);
      }
    }
  });
});
