// Issue 18 through the real router and core (test/support/harness.ts): every policy rule keyhold
// accepts is enforced, the rest refused at write; response wrapping (issue 14 part 5); cubbyhole, tools,
// leases and capability endpoints. The CLI's -wrap-ttl and unwrap: test/integration/cli-wrap.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
  const mounts = (await d.req('GET', 'sys/mounts')).body.data;
  if (!mounts['transit/']) expect((await d.req('POST', 'sys/mounts/transit', { type: 'transit' })).status).toBe(204);
  if (!mounts['secret/'])
    expect((await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } })).status).toBe(204);
  expect((await d.req('POST', 'transit/keys/ci', {})).status).toBeLessThan(300);
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

async function policy(name: string, text: string): Promise<void> {
  const r = await d.req('PUT', `sys/policies/acl/${name}`, { policy: text });
  expect(r.status, r.text).toBe(204);
}
async function tokenWith(...policies: string[]): Promise<string> {
  const r = await d.req('POST', 'auth/token/create', { policies });
  expect(r.status, r.text).toBe(200);
  return r.body.auth.client_token as string;
}
const PT = Buffer.from('hello').toString('base64');

describe('policy writes refused with 400 naming key and line (nothing stored)', () => {
  it.each([
    [
      'a misspelt key inside a path block',
      'path "secret/*" {\n  capabilites = ["read"]\n}',
      /path "secret\/\*": invalid key "capabilites" on line 2/,
    ],
    [
      'an unknown top-level key',
      'path "a" { capabilities = ["read"] }\nstorage "x" {}',
      /invalid key "storage" on line 2/,
    ],
    [
      '+* in a path',
      'path "secret/+*" { capabilities = ["read"] }',
      /invalid use of wildcards \('\+\*' is forbidden\)/,
    ],
    [
      'min_wrapping_ttl above max_wrapping_ttl',
      'path "a" {\n capabilities = ["read"]\n min_wrapping_ttl = "10m"\n max_wrapping_ttl = "1m"\n}',
      /max_wrapping_ttl cannot be less than min_wrapping_ttl/,
    ],
    [
      'a non-list parameter value',
      'path "a" {\n capabilities = ["update"]\n allowed_parameters = { "plaintext" = "x" }\n}',
      /"plaintext" must be a list of values at line 3/,
    ],
    ['an unknown capability', 'path "a" { capabilities = ["reed"] }', /invalid capability "reed"/],
    [
      'an Enterprise-only key',
      'path "a" {\n capabilities = ["read"]\n mfa_methods = ["totp"]\n}',
      /mfa_methods.*line 3.*Enterprise/,
    ],
    [
      'a bad duration',
      'path "a" {\n capabilities = ["read"]\n max_wrapping_ttl = "soon"\n}',
      /max_wrapping_ttl.*line 3/,
    ],
  ])('%s', async (_what, text, msg) => {
    const r = await d.req('PUT', 'sys/policies/acl/refused', { policy: text });
    expect(r.status, r.text).toBe(400);
    expect(r.body.errors[0]).toMatch(msg);
    expect((await d.req('GET', 'sys/policies/acl/refused')).status).toBe(404);
  });

  it('accepts a top-level name, subscribe/recover, the legacy policy form and a base64 body; lower-cases names', async () => {
    const text =
      'name = "ignored"\npath "secret/data/x" { capabilities = ["subscribe", "recover", "read"] }\npath "legacy/*" { policy = "write" }';
    const r = await d.req('PUT', 'sys/policies/acl/MixedCase', { policy: Buffer.from(text).toString('base64') });
    expect(r.status, r.text).toBe(204);
    const back = await d.req('GET', 'sys/policies/acl/mixedcase');
    expect(back.body.data.policy).toBe(text);
    const t = await tokenWith('mixedcase');
    const caps = await d.req('POST', 'sys/capabilities-self', { paths: ['legacy/a', 'secret/data/x'] }, { token: t });
    expect(caps.body.data['legacy/a']).toEqual(['create', 'delete', 'list', 'read', 'update']);
    expect(caps.body.data['secret/data/x']).toEqual(['read', 'recover', 'subscribe']);
  });

  it('keeps root immutable and default undeletable', async () => {
    expect(
      (await d.req('PUT', 'sys/policies/acl/root', { policy: 'path "a" { capabilities = ["read"] }' })).status,
    ).toBe(400);
    expect((await d.req('DELETE', 'sys/policies/acl/default')).status).toBe(400);
    expect(
      (await d.req('PUT', 'sys/policies/acl/response-wrapping', { policy: 'path "a" { capabilities = ["read"] }' }))
        .status,
    ).toBe(400);
  });
});

describe('parameter constraints (AllowOperation)', () => {
  it('lets a CI token encrypt only with plaintext and never key_version', async () => {
    await policy(
      'ci-encrypt',
      'path "transit/encrypt/ci" {\n capabilities = ["update"]\n allowed_parameters = { "plaintext" = [] }\n denied_parameters = { "key_version" = [] }\n}',
    );
    const t = await tokenWith('ci-encrypt');
    expect((await d.req('POST', 'transit/encrypt/ci', { plaintext: PT }, { token: t })).status).toBe(200);
    const kv = await d.req('POST', 'transit/encrypt/ci', { plaintext: PT, key_version: 1 }, { token: t });
    expect(kv.status).toBe(403);
    expect(kv.body.errors).toEqual(['permission denied']);
    expect((await d.req('POST', 'transit/encrypt/ci', { plaintext: PT, context: 'eA==' }, { token: t })).status).toBe(
      403,
    );
  });

  it('glob-matches allowed values, requires required parameters and compares names lower-cased', async () => {
    await policy(
      'kv-rules',
      'path "secret/data/app" {\n capabilities = ["create", "update"]\n allowed_parameters = { "data" = [] "options" = [] }\n required_parameters = ["data"]\n}\npath "transit/keys/*" {\n capabilities = ["create", "update"]\n allowed_parameters = { "type" = ["aes*"] "TYPE" = ["chacha20-poly1305"] }\n}',
    );
    const t = await tokenWith('kv-rules');
    expect((await d.req('POST', 'secret/data/app', { data: { a: '1' } }, { token: t })).status).toBe(200);
    expect((await d.req('POST', 'secret/data/app', { options: { cas: 0 } }, { token: t })).status).toBe(403);
    expect((await d.req('POST', 'transit/keys/k1', { type: 'aes128-gcm96' }, { token: t })).status).toBeLessThan(300);
    expect((await d.req('POST', 'transit/keys/k2', { type: 'chacha20-poly1305' }, { token: t })).status).toBeLessThan(
      300,
    );
    expect((await d.req('POST', 'transit/keys/k3', { type: 'rsa-2048' }, { token: t })).status).toBe(403);
  });

  it('merges parameter lists across policies (NewACL) and lets deny win', async () => {
    await policy(
      'm1',
      'path "transit/encrypt/ci" {\n capabilities = ["update"]\n allowed_parameters = { "plaintext" = [] }\n}',
    );
    await policy(
      'm2',
      'path "transit/encrypt/ci" {\n capabilities = ["update"]\n allowed_parameters = { "context" = [] }\n}',
    );
    await policy('m3', 'path "transit/encrypt/ci" { capabilities = ["deny"] }');
    const both = await tokenWith('m1', 'm2');
    expect(
      (await d.req('POST', 'transit/encrypt/ci', { plaintext: PT, context: 'eA==' }, { token: both })).status,
    ).not.toBe(403);
    const denied = await tokenWith('m1', 'm3');
    expect((await d.req('POST', 'transit/encrypt/ci', { plaintext: PT }, { token: denied })).status).toBe(403);
  });
});

describe('LIST as Vault', () => {
  it('grants LIST through a rule written without the trailing slash, exact and with +', async () => {
    await policy(
      'lister',
      'path "secret/metadata" { capabilities = ["list"] }\npath "transit/+" { capabilities = ["list"] }',
    );
    await d.req('POST', 'secret/data/one', { data: { a: 1 } });
    const t = await tokenWith('lister');
    expect((await d.req('LIST', 'secret/metadata', undefined, { token: t })).status).toBe(200);
    expect((await d.req('LIST', 'transit/keys', undefined, { token: t })).status).toBe(200);
    const caps = await d.req('POST', 'sys/capabilities-self', { paths: ['secret/metadata/'] }, { token: t });
    expect(caps.body.data.capabilities).toEqual(['list']);
  });
});

describe('response wrapping', () => {
  it('wraps a KV read: wrap_info instead of data, readable once, lookup without using it', async () => {
    await d.req('POST', 'secret/data/wrapped', { data: { password: 's3cret' } });
    const r = await d.req('GET', 'secret/data/wrapped', undefined, { headers: { 'X-Vault-Wrap-TTL': '60s' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.text).not.toContain('s3cret');
    const w = r.body.wrap_info;
    expect(w).toMatchObject({ ttl: 60, creation_path: 'secret/data/wrapped' });
    expect(w).not.toHaveProperty('wrapped_accessor'); // omitempty, as Vault's HTTPWrapInfo
    expect(w.token).toMatch(/^hvs\./);
    const look = await d.req('POST', 'sys/wrapping/lookup', { token: w.token }, { token: null });
    expect(look.status, look.text).toBe(200);
    expect(look.body.data).toMatchObject({ creation_ttl: 60, creation_path: 'secret/data/wrapped' });
    const un = await d.req('POST', 'sys/wrapping/unwrap', {}, { token: w.token });
    expect(un.status, un.text).toBe(200);
    expect(un.body.data.data).toEqual({ password: 's3cret' });
    const again = await d.req('POST', 'sys/wrapping/unwrap', {}, { token: w.token });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['wrapping token is not valid or does not exist']);
  });

  it('wraps arbitrary data with sys/wrapping/wrap, unwraps by a third party, rewraps', async () => {
    const plain = await d.req('POST', 'sys/wrapping/wrap', { a: 'b' });
    expect(plain.status).toBe(400);
    expect(plain.body.errors[0]).toMatch(/requires response wrapping/);
    const r = await d.req('POST', 'sys/wrapping/wrap', { a: 'b' }, { headers: { 'X-Vault-Wrap-TTL': '5m' } });
    expect(r.body.wrap_info.ttl).toBe(300);
    const re = await d.req('POST', 'sys/wrapping/rewrap', { token: r.body.wrap_info.token });
    expect(re.status, re.text).toBe(200);
    expect(re.body.wrap_info).toMatchObject({ ttl: 300, creation_path: 'sys/wrapping/wrap' });
    expect(re.body.wrap_info.token).not.toBe(r.body.wrap_info.token);
    expect((await d.req('POST', 'sys/wrapping/unwrap', { token: r.body.wrap_info.token })).status).toBe(400);
    const someone = await tokenWith('default');
    const un = await d.req('POST', 'sys/wrapping/unwrap', { token: re.body.wrap_info.token }, { token: someone });
    expect(un.status, un.text).toBe(200);
    expect(un.body.data).toEqual({ a: 'b' });
  });

  it('refuses a wrap TTL above 768h or negative, and a token created wrapped names its accessor', async () => {
    expect(
      (await d.req('GET', 'secret/data/wrapped', undefined, { headers: { 'X-Vault-Wrap-TTL': '769h' } })).status,
    ).toBe(400);
    expect(
      (await d.req('GET', 'secret/data/wrapped', undefined, { headers: { 'X-Vault-Wrap-TTL': '-5' } })).body.errors,
    ).toEqual(['requested wrap ttl cannot be negative']);
    const r = await d.req(
      'POST',
      'auth/token/create',
      { policies: ['default'] },
      { headers: { 'X-Vault-Wrap-TTL': '30' } },
    );
    expect(r.body.auth).toBeNull();
    expect(r.body.wrap_info.wrapped_accessor).toMatch(/\w+/);
    const un = await d.req('POST', 'sys/wrapping/unwrap', { token: r.body.wrap_info.token });
    expect(un.body.auth.accessor).toBe(r.body.wrap_info.wrapped_accessor);
  });

  it('gone at its TTL', async () => {
    const r = await d.req('POST', 'sys/wrapping/wrap', { x: 'y' }, { headers: { 'X-Vault-Wrap-TTL': '1' } });
    await new Promise((res) => setTimeout(res, 1300));
    expect((await d.req('POST', 'sys/wrapping/unwrap', { token: r.body.wrap_info.token })).status).toBe(400);
  });

  it('enforces min/max_wrapping_ttl: unwrapped requests are denied, out-of-range ones too', async () => {
    await policy(
      'must-wrap',
      'path "secret/data/wrapped" {\n capabilities = ["read"]\n min_wrapping_ttl = "1m"\n max_wrapping_ttl = "10m"\n}',
    );
    const t = await tokenWith('must-wrap');
    expect((await d.req('GET', 'secret/data/wrapped', undefined, { token: t })).status).toBe(403);
    expect(
      (await d.req('GET', 'secret/data/wrapped', undefined, { token: t, headers: { 'X-Vault-Wrap-TTL': '30s' } }))
        .status,
    ).toBe(403);
    expect(
      (await d.req('GET', 'secret/data/wrapped', undefined, { token: t, headers: { 'X-Vault-Wrap-TTL': '11m' } }))
        .status,
    ).toBe(403);
    const ok = await d.req('GET', 'secret/data/wrapped', undefined, {
      token: t,
      headers: { 'X-Vault-Wrap-TTL': '5m' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.wrap_info.ttl).toBe(300);
  });
});

describe('cubbyhole', () => {
  it('is private to a token and destroyed with it', async () => {
    const a = await tokenWith('default');
    const b = await tokenWith('default');
    expect((await d.req('POST', 'cubbyhole/note', { v: 'mine' }, { token: a })).status).toBe(204);
    expect((await d.req('GET', 'cubbyhole/note', undefined, { token: a })).body.data).toEqual({ v: 'mine' });
    expect((await d.req('GET', 'cubbyhole/note', undefined, { token: b })).status).toBe(404);
    expect((await d.req('LIST', 'cubbyhole', undefined, { token: a })).body.data.keys).toEqual(['note']);
    const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: a });
    expect((await d.req('POST', 'auth/token/revoke-accessor', { accessor: look.body.data.accessor })).status).toBe(204);
    const c = await tokenWith('default');
    expect((await d.req('GET', 'cubbyhole/note', undefined, { token: c })).status).toBe(404);
  });
});

describe('tools, leases and capability endpoints', () => {
  it('hashes and produces random bytes as Vault', async () => {
    const t = await tokenWith('default');
    const h = await d.req('POST', 'sys/tools/hash/sha2-256', { input: PT }, { token: t });
    expect(h.body.data.sum).toBe('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    const r = await d.req('POST', 'sys/tools/random/16', { format: 'hex' }, { token: t });
    expect(r.body.data.random_bytes).toMatch(/^[0-9a-f]{32}$/);
    expect((await d.req('POST', 'sys/tools/random', { bytes: 200000 }, { token: t })).status).toBe(400);
  });

  it('answers unknown lease ids as Vault', async () => {
    const t = await tokenWith('default');
    const l = await d.req('POST', 'sys/leases/lookup', { lease_id: 'secret/data/x/abc' }, { token: t });
    expect([l.status, l.body.errors]).toEqual([400, ['invalid lease']]);
    const rn = await d.req('POST', 'sys/leases/renew', { lease_id: 'secret/data/x/abc' }, { token: t });
    expect([rn.status, rn.body.errors]).toEqual([400, ['lease not found']]);
  });

  it("reports another token's capabilities, by accessor too, and the resultant ACL", async () => {
    await policy(
      'caps',
      'path "secret/data/*" { capabilities = ["read", "sudo"] }\npath "secret/data/locked" { capabilities = ["deny"] }',
    );
    const t = await tokenWith('caps');
    const c = await d.req('POST', 'sys/capabilities', { token: t, paths: ['secret/data/a', 'secret/data/locked'] });
    expect(c.body.data).toMatchObject({ 'secret/data/a': ['read', 'sudo'], 'secret/data/locked': ['deny'] });
    const acc = (await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).body.data.accessor;
    const ca = await d.req('POST', 'sys/capabilities-accessor', { accessor: acc, path: 'secret/data/a' });
    expect(ca.body.data.capabilities).toEqual(['read', 'sudo']);
    const ra = await d.req('GET', 'sys/internal/ui/resultant-acl', undefined, { token: t });
    expect(ra.status, ra.text).toBe(200);
    expect(ra.body.data.glob_paths['secret/data/']).toEqual({ capabilities: ['read', 'sudo'] });
    expect(ra.body.data.exact_paths['secret/data/locked']).toEqual({ capabilities: ['deny'] });
    expect(ra.body.data.root).toBe(false);
  });
});

describe('templated policies with real identities (AppRole login -> entity and alias)', () => {
  it('resolves {{identity.entity.aliases.<accessor>.metadata.role_name}} and {{identity.entity.id}} per login', async () => {
    expect((await d.req('POST', 'sys/auth/approle', { type: 'approle' })).status).toBeLessThan(300);
    const auths = (await d.req('GET', 'sys/auth')).body.data;
    const acc = auths['approle/'].accessor as string;
    await policy(
      'tmpl',
      `path "secret/data/team/{{identity.entity.aliases.${acc}.metadata.role_name}}/*" { capabilities = ["read"] }\npath "secret/data/home/{{identity.entity.id}}" { capabilities = ["read"] }`,
    );
    await d.req('POST', 'secret/data/team/payments/db', { data: { pw: 'p' } });
    await d.req('POST', 'secret/data/team/search/db', { data: { pw: 's' } });
    const login = async (role: string) => {
      expect((await d.req('POST', `auth/approle/role/${role}`, { token_policies: ['tmpl'] })).status).toBeLessThan(300);
      const roleId = (await d.req('GET', `auth/approle/role/${role}/role-id`)).body.data.role_id;
      const secretId = (await d.req('POST', `auth/approle/role/${role}/secret-id`, {})).body.data.secret_id;
      const r = await d.req('POST', 'auth/approle/login', { role_id: roleId, secret_id: secretId }, { token: null });
      expect(r.status, r.text).toBe(200);
      return { token: r.body.auth.client_token as string, entity: r.body.auth.entity_id as string };
    };
    const pay = await login('payments');
    expect((await d.req('GET', 'secret/data/team/payments/db', undefined, { token: pay.token })).status).toBe(200);
    expect((await d.req('GET', 'secret/data/team/search/db', undefined, { token: pay.token })).status).toBe(403);
    const search = await login('search');
    expect((await d.req('GET', 'secret/data/team/search/db', undefined, { token: search.token })).status).toBe(200);
    expect((await d.req('GET', 'secret/data/team/payments/db', undefined, { token: search.token })).status).toBe(403);
    // The same policy's {{identity.entity.id}} rule: each entity reads only its own home.
    expect(pay.entity).toBeTruthy();
    const caps = await d.req(
      'POST',
      'sys/capabilities-self',
      { paths: [`secret/data/home/${pay.entity}`, `secret/data/home/${search.entity}`] },
      { token: pay.token },
    );
    expect(caps.body.data).toMatchObject({
      [`secret/data/home/${pay.entity}`]: ['read'],
      [`secret/data/home/${search.entity}`]: ['deny'],
    });
    // The default policy's templated rule: a token reads its own entity, not another's.
    expect((await d.req('GET', `identity/entity/id/${pay.entity}`, undefined, { token: pay.token })).status).toBe(200);
    expect((await d.req('GET', `identity/entity/id/${search.entity}`, undefined, { token: pay.token })).status).toBe(
      403,
    );
  });
});
