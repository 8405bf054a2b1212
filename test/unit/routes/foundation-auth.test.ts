import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startHarness, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

async function policy(name: string, text: string): Promise<void> {
  const r = await d.req('PUT', `sys/policies/acl/${name}`, { policy: text });
  expect(r.status, r.text).toBe(204);
}
async function token(
  body: Record<string, unknown>,
  as = 'root',
): Promise<{ token: string; auth: Record<string, unknown> }> {
  const r = await d.req('POST', 'auth/token/create', body, { token: as });
  expect(r.status, r.text).toBe(200);
  return { token: r.body.auth.client_token, auth: r.body.auth };
}

describe('tokens', () => {
  it('creates a token with policies, ttl, renewable and num_uses, and lookup-self reports them', async () => {
    const { token: t, auth } = await token({
      policies: ['reader', 'Writer'],
      ttl: '2h',
      renewable: false,
      num_uses: 10,
      display_name: 'ci',
    });
    expect(t).toMatch(/^hvs\./);
    expect(auth).toMatchObject({
      policies: ['default', 'reader', 'writer'],
      lease_duration: 7200,
      renewable: false,
      num_uses: 10,
      token_type: 'service',
    });
    const r = await d.req('GET', 'auth/token/lookup-self', undefined, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      policies: ['default', 'reader', 'writer'],
      renewable: false,
      display_name: 'token-ci',
      creation_ttl: 7200,
      accessor: auth.accessor,
      id: t,
    });
    expect(r.body.data.ttl).toBeGreaterThan(7100);
    expect(r.body.data.num_uses).toBe(9);
  });

  it('gives non-root tokens the 768h default ttl and root-policy tokens none', async () => {
    expect((await token({ policies: ['x'] })).auth.lease_duration).toBe(768 * 3600);
    expect((await token({ policies: ['root'] })).auth.lease_duration).toBe(0);
  });

  it('looks up another token by value and by accessor; an unknown one is 403 "bad token"', async () => {
    const { token: t, auth } = await token({ policies: ['p1'] });
    const byValue = await d.req('POST', 'auth/token/lookup', { token: t });
    expect(byValue.body.data.accessor).toBe(auth.accessor);
    const byAcc = await d.req('POST', 'auth/token/lookup-accessor', { accessor: auth.accessor });
    expect(byAcc.body.data.policies).toEqual(['default', 'p1']);
    expect(byAcc.body.data.id).toBe('');
    const bad = await d.req('POST', 'auth/token/lookup', { token: 'hvs.doesnotexist' });
    expect(bad.status).toBe(403);
    expect(bad.body.errors).toEqual(['bad token']);
    expect((await d.req('POST', 'auth/token/lookup', {})).status).toBe(400);
  });

  it('renews itself and refuses to renew a non-renewable token', async () => {
    const { token: t } = await token({ policies: ['default'], ttl: '60s' });
    const r = await d.req('POST', 'auth/token/renew-self', { increment: '1h' }, { token: t });
    expect(r.status, r.text).toBe(200);
    expect(r.body.auth.client_token).toBe(t);
    const look = await d.req('GET', 'auth/token/lookup-self', undefined, { token: t });
    expect(look.body.data.ttl).toBeGreaterThan(3500);
    const { token: fixed } = await token({ policies: ['default'], ttl: '60s', renewable: false });
    const no = await d.req('POST', 'auth/token/renew-self', {}, { token: fixed });
    expect(no.status).toBe(400);
    expect(no.body.errors[0]).toMatch(/not renewable/);
  });

  it('revokes a token (and its children) and revoke-self ends the caller', async () => {
    const parent = await token({ policies: ['default', 'maker'] });
    await policy('maker', 'path "auth/token/create" { capabilities = ["update"] }');
    const child = await token({ policies: ['default'] }, parent.token);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: child.token })).status).toBe(200);
    expect((await d.req('POST', 'auth/token/revoke', { token: parent.token })).status).toBe(204);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: parent.token })).status).toBe(403);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: child.token })).status).toBe(403);
    // Revoking an unknown token is not an error.
    expect((await d.req('POST', 'auth/token/revoke', { token: 'hvs.gone' })).status).toBe(204);
    const self = await token({ policies: ['default'] });
    expect((await d.req('POST', 'auth/token/revoke-self', {}, { token: self.token })).status).toBe(204);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: self.token })).status).toBe(403);
  });

  it('refuses a token whose 1s ttl has passed', async () => {
    const t0 = Date.now();
    const { token: t } = await token({ policies: ['default'], ttl: '1s' });
    const first = await d.req('GET', 'auth/token/lookup-self', undefined, { token: t });
    // Valid while inside its second (a very loaded machine may take longer to get here: then skip this half).
    if (Date.now() - t0 < 900) expect(first.status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, 1300 - (Date.now() - t0))));
    const after = await d.req('GET', 'auth/token/lookup-self', undefined, { token: t });
    expect(after.status).toBe(403);
    expect(after.body.errors).toEqual(['permission denied']);
  });

  it('counts num_uses and refuses the token once they are spent', async () => {
    const { token: t } = await token({ policies: ['default'], num_uses: 2 });
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(403);
  });

  it('only lets a non-root token create children with a subset of its policies', async () => {
    await policy('maker2', 'path "auth/token/create" { capabilities = ["update"] }');
    const { token: t } = await token({ policies: ['maker2'] });
    const bad = await d.req('POST', 'auth/token/create', { policies: ['root'] }, { token: t });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^policies: /);
    const ok = await d.req('POST', 'auth/token/create', { policies: ['maker2'] }, { token: t });
    expect(ok.status).toBe(200);
  });
});

describe('policies and the ACL', () => {
  it('stores HCL and JSON policies, lists, reads and deletes them', async () => {
    const hcl = '# comment\npath "sys/mounts" {\n  capabilities = ["read"]\n}\n';
    await policy('hclpol', hcl);
    await policy('jsonpol', JSON.stringify({ path: { 'sys/mounts': { capabilities: ['read'] } } }));
    expect((await d.req('GET', 'sys/policies/acl/hclpol')).body.data).toEqual({ name: 'hclpol', policy: hcl });
    const list = await d.req('LIST', 'sys/policies/acl');
    expect(list.body.data.keys).toEqual(expect.arrayContaining(['default', 'hclpol', 'jsonpol', 'root']));
    expect((await d.req('DELETE', 'sys/policies/acl/jsonpol')).status).toBe(204);
    expect((await d.req('GET', 'sys/policies/acl/jsonpol')).status).toBe(404);
    const bad = await d.req('PUT', 'sys/policies/acl/bad', { policy: 'path "x" { capabilities = ["fly"] }' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/invalid capability "fly"/);
    expect((await d.req('PUT', 'sys/policies/acl/root', { policy: hcl })).status).toBe(400);
    expect((await d.req('DELETE', 'sys/policies/acl/default')).status).toBe(400);
  });

  it('lets a token read a path but not update it', async () => {
    await policy('readonly', 'path "sys/policies/acl/*" { capabilities = ["read", "list"] }');
    await policy('target', 'path "a" { capabilities = ["read"] }');
    const { token: t } = await token({ policies: ['readonly'] });
    const r = await d.req('GET', 'sys/policies/acl/target', undefined, { token: t });
    expect(r.status).toBe(200);
    expect(r.body.data.name).toBe('target');
    expect((await d.req('LIST', 'sys/policies/acl', undefined, { token: t })).status).toBe(200);
    const w = await d.req(
      'PUT',
      'sys/policies/acl/target',
      { policy: 'path "b" { capabilities = ["read"] }' },
      { token: t },
    );
    expect(w.status).toBe(403);
    expect(w.body.errors).toEqual(['permission denied']);
    expect((await d.req('DELETE', 'sys/policies/acl/target', undefined, { token: t })).status).toBe(403);
    // Nothing changed.
    expect((await d.req('GET', 'sys/policies/acl/target')).body.data.policy).toBe(
      'path "a" { capabilities = ["read"] }',
    );
  });

  it('lets deny win over an allow of the same path in another policy', async () => {
    await policy('allow-mounts', 'path "sys/mounts" { capabilities = ["read"] }');
    await policy('deny-mounts', 'path "sys/mounts" { capabilities = ["deny"] }');
    const both = await token({ policies: ['allow-mounts', 'deny-mounts'] });
    const allowOnly = await token({ policies: ['allow-mounts'] });
    expect((await d.req('GET', 'sys/mounts', undefined, { token: allowOnly.token })).status).toBe(200);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: both.token })).status).toBe(403);
  });

  it('matches + segments and denies by default', async () => {
    await policy('tunes', 'path "sys/mounts/+/tune" { capabilities = ["read"] }');
    const { token: t } = await token({ policies: ['tunes'] });
    expect((await d.req('GET', 'sys/mounts/transit/tune', undefined, { token: t })).status).toBe(200);
    expect((await d.req('GET', 'sys/mounts/secret/tune', undefined, { token: t })).status).toBe(200);
    expect((await d.req('GET', 'sys/mounts/transit', undefined, { token: t })).status).toBe(403);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(403);
    // The default policy still lets it look itself up.
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
  });

  it('applies a policy change to existing tokens at once', async () => {
    await policy('changing', 'path "sys/mounts" { capabilities = ["read"] }');
    const { token: t } = await token({ policies: ['changing'] });
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(200);
    await policy('changing', 'path "sys/mounts" { capabilities = ["deny"] }');
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(403);
    await d.req('DELETE', 'sys/policies/acl/changing');
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(403);
  });

  it('needs sudo to seal, and reports capabilities', async () => {
    await policy('sealer', 'path "sys/seal" { capabilities = ["update"] }');
    const { token: t } = await token({ policies: ['sealer'] });
    expect((await d.req('POST', 'sys/seal', {}, { token: t })).status).toBe(403);
    const caps = await d.req('POST', 'sys/capabilities-self', { paths: ['sys/seal', 'sys/mounts'] }, { token: t });
    expect(caps.body.data['sys/seal']).toEqual(['update']);
    expect(caps.body.data['sys/mounts']).toEqual(['deny']);
  });

  it('lowercases policy names everywhere', async () => {
    await policy('MixedCase', 'path "sys/mounts" { capabilities = ["read"] }');
    const { token: t } = await token({ policies: ['MIXEDCASE'] });
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(200);
    expect((await d.req('GET', 'sys/policies/acl/mixedcase')).status).toBe(200);
  });
});
