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

describe('mounts', () => {
  it('lists the dev mounts with Vault-style accessors', async () => {
    const r = await d.req('GET', 'sys/mounts');
    expect(r.status).toBe(200);
    expect(r.body.data['transit/']).toMatchObject({
      type: 'transit',
      accessor: expect.stringMatching(/^transit_[0-9a-f]{8}$/),
      options: null,
    });
    expect(r.body.data['secret/']).toMatchObject({
      type: 'kv',
      accessor: expect.stringMatching(/^kv_[0-9a-f]{8}$/),
      options: { version: '2' },
    });
    expect(r.body.data['sys/'].type).toBe('system');
  });

  it('mounts transit at any path, reads it back, and gives every mount its own accessor', async () => {
    expect((await d.req('POST', 'sys/mounts/payments', { type: 'transit', description: 'payment keys' })).status).toBe(
      204,
    );
    expect((await d.req('POST', 'sys/mounts/team/a/crypto', { type: 'transit' })).status).toBe(204);
    const one = await d.req('GET', 'sys/mounts/payments');
    expect(one.body.data).toMatchObject({
      type: 'transit',
      description: 'payment keys',
      accessor: expect.stringMatching(/^transit_[0-9a-f]{8}$/),
    });
    const all = (await d.req('GET', 'sys/mounts')).body.data;
    const accessors = Object.values(all).map((m) => (m as { accessor: string }).accessor);
    expect(new Set(accessors).size).toBe(accessors.length);
    expect(all['team/a/crypto/'].type).toBe('transit');
  });

  it('keeps several transit mounts independent', async () => {
    expect((await d.req('POST', 'sys/mounts/indep', { type: 'transit' })).status).toBe(204);
    expect((await d.req('POST', 'transit/keys/shared-name', {})).status).toBe(200);
    expect((await d.req('LIST', 'indep/keys')).status).toBe(404);
    const enc = await d.req('POST', 'transit/encrypt/shared-name', { plaintext: Buffer.from('hi').toString('base64') });
    expect(enc.status).toBe(200);
    // The same key name on the other mount is another key: it cannot decrypt.
    expect((await d.req('POST', 'indep/keys/shared-name', {})).status).toBe(200);
    const dec = await d.req('POST', 'indep/decrypt/shared-name', { ciphertext: enc.body.data.ciphertext });
    expect(dec.status).toBeGreaterThanOrEqual(400);
    expect(dec.status).toBeLessThan(500);
    const ok = await d.req('POST', 'transit/decrypt/shared-name', { ciphertext: enc.body.data.ciphertext });
    expect(Buffer.from(ok.body.data.plaintext, 'base64').toString()).toBe('hi');
  });

  it('accepts kv with options.version 2 or kv-v2, kv without a version as KV version 1 (as Vault), and refuses unknown types naming the field', async () => {
    expect((await d.req('POST', 'sys/mounts/kv2a', { type: 'kv', options: { version: '2' } })).status).toBe(204);
    expect((await d.req('POST', 'sys/mounts/kv2b', { type: 'kv-v2' })).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts/kv2b')).body.data).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect((await d.req('POST', 'sys/mounts/kv1', { type: 'kv' })).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts/kv1')).body.data).toMatchObject({ type: 'kv', options: { version: '1' } });
    const v3 = await d.req('POST', 'sys/mounts/kv3', { type: 'kv', options: { version: '3' } });
    expect(v3.status).toBe(400);
    expect(v3.body.errors[0]).toMatch(/^options\.version: invalid version provided: 3/);
    const bad = await d.req('POST', 'sys/mounts/x1', { type: 'database' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^type: unknown engine type "database"/);
    expect((await d.req('POST', 'sys/mounts/x2', {})).body.errors[0]).toMatch(/^type: /);
  });

  it('refuses taken, nested and reserved paths', async () => {
    for (const [path, why] of [
      ['transit', /already in use at transit\//],
      ['transit/inner', /already in use at transit\//],
      ['team', /already in use at team\/a\/crypto\//],
      ['sys/mine', /reserved/],
      ['auth/mine', /reserved/],
    ] as const) {
      const r = await d.req('POST', `sys/mounts/${path}`, { type: 'transit' });
      expect(r.status, path).toBe(400);
      expect(r.body.errors[0]).toMatch(why);
    }
  });

  it('tunes the description and reads the tune endpoint', async () => {
    expect((await d.req('POST', 'sys/mounts/payments/tune', { description: 'renamed' })).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts')).body.data['payments/'].description).toBe('renamed');
    const t = await d.req('GET', 'sys/mounts/payments/tune');
    expect(t.body.data).toMatchObject({
      description: 'renamed',
      default_lease_ttl: expect.any(Number),
      max_lease_ttl: expect.any(Number),
    });
    expect((await d.req('GET', 'sys/mounts/nowhere/tune')).status).toBe(400);
  });

  it('unmounts and deletes the data: a new mount at the same path starts empty', async () => {
    expect((await d.req('POST', 'sys/mounts/gone', { type: 'transit' })).status).toBe(204);
    expect((await d.req('POST', 'gone/keys/k', {})).status).toBe(200);
    expect((await d.req('DELETE', 'sys/mounts/gone')).status).toBe(204);
    expect((await d.req('GET', 'sys/mounts/gone')).status).toBe(404);
    expect((await d.req('LIST', 'gone/keys')).status).toBe(404);
    expect((await d.req('DELETE', 'sys/mounts/gone')).status).toBe(204);
    expect((await d.req('POST', 'sys/mounts/gone', { type: 'transit' })).status).toBe(204);
    expect((await d.req('LIST', 'gone/keys')).status).toBe(404);
  });

  it('reloads engines by mount and by plugin name, keeping their data', async () => {
    expect((await d.req('POST', 'payments/keys/r1', {})).status).toBe(200);
    const byMount = await d.req('POST', 'sys/plugins/reload/backend', { mounts: ['payments'] });
    expect(byMount.status).toBe(200);
    expect(byMount.body.data.reloaded).toEqual(['payments/']);
    const byPlugin = await d.req('POST', 'sys/plugins/reload/backend', { plugin: 'transit' });
    expect(byPlugin.body.data.reloaded).toEqual(expect.arrayContaining(['transit/', 'payments/', 'indep/']));
    expect(byPlugin.body.data.reloaded).not.toContain('secret/');
    expect((await d.req('LIST', 'payments/keys')).body.data.keys).toContain('r1');
    expect((await d.req('POST', 'sys/plugins/reload/backend', {})).status).toBe(400);
  });

  it('needs permission on sys/mounts like any path', async () => {
    await d.req('PUT', 'sys/policies/acl/mount-reader', { policy: 'path "sys/mounts" { capabilities = ["read"] }' });
    const t = (await d.req('POST', 'auth/token/create', { policies: ['mount-reader'] })).body.auth.client_token;
    expect((await d.req('GET', 'sys/mounts', undefined, { token: t })).status).toBe(200);
    expect((await d.req('POST', 'sys/mounts/sneaky', { type: 'transit' }, { token: t })).status).toBe(403);
  });
});
