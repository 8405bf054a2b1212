/**
 * The engine harness itself (test/support/harness.ts): it answers as the daemon does for the things
 * route tests lean on (envelope, statuses, headers, body limit, sealed state, the dev mounts).
 */
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

describe('engine harness (dev mode)', () => {
  it("mounts transit/ and secret/ (kv v2) and answers Vault's envelope with its headers", async () => {
    const r = await d.req('GET', 'sys/mounts');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.text)));
    expect(r.body.data['transit/'].type).toBe('transit');
    expect(r.body.data['secret/']).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect(r.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends the root token unless told otherwise; null sends none', async () => {
    expect((await d.req('GET', 'auth/token/lookup-self')).body.data.id).toBe('root');
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: null })).status).toBe(403);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: 'hvs.nope' })).status).toBe(403);
  });

  it('an unknown path is 404 with a token and 403 without, as on the daemon', async () => {
    expect((await d.req('GET', 'nowhere/at/all')).status).toBe(404);
    expect((await d.req('GET', 'nowhere/at/all', undefined, { token: null })).status).toBe(403);
  });

  it('raw bodies, form bodies and header names in any case reach the router', async () => {
    const rule = 'path "secret/data/formed" { capabilities = ["read"] }';
    const form = await d.req('POST', 'sys/policies/acl/formed', undefined, {
      raw: new URLSearchParams({ policy: rule }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status, form.text).toBe(204);
    expect((await d.req('GET', 'sys/policies/acl/formed')).body.data.policy).toBe(rule);
    const wrapped = await d.req('POST', 'sys/wrapping/wrap', { a: 1 }, { headers: { 'X-VAULT-WRAP-TTL': '60' } });
    expect(wrapped.status, wrapped.text).toBe(200);
    expect(wrapped.body.wrap_info.ttl).toBe(60);
  });

  it("a body over the daemon's 32 MiB limit is 413", async () => {
    const r = await d.req('POST', 'transit/encrypt/any', undefined, { raw: Buffer.alloc(32 * 1024 * 1024 + 1, 0x61) });
    expect(r.status).toBe(413);
    expect(r.body.errors[0]).toMatch(/too large/);
  });
});

describe('engine harness (not initialised)', () => {
  it('starts sealed and uninitialised without dev mode: 503 outside the seal routes', async () => {
    const s = await startHarness({ dev: false });
    try {
      const status = await s.req('GET', 'sys/seal-status', undefined, { token: null });
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ initialized: false, sealed: true });
      expect((await s.req('GET', 'sys/mounts')).status).toBe(503);
    } finally {
      await s.stop();
      cleanup(s.dir);
    }
  });
});

describe('engine harness (environment)', () => {
  it('sets `env` while the core runs and restores the previous values at stop', async () => {
    process.env.KEYHOLD_HARNESS_PROBE_B = 'before';
    const s = await startHarness({ env: { KEYHOLD_HARNESS_PROBE_A: 'on', KEYHOLD_HARNESS_PROBE_B: undefined } });
    try {
      expect(process.env.KEYHOLD_HARNESS_PROBE_A).toBe('on');
      expect(process.env.KEYHOLD_HARNESS_PROBE_B).toBeUndefined();
    } finally {
      await s.stop();
      cleanup(s.dir);
    }
    expect(process.env.KEYHOLD_HARNESS_PROBE_A).toBeUndefined();
    expect(process.env.KEYHOLD_HARNESS_PROBE_B).toBe('before');
    delete process.env.KEYHOLD_HARNESS_PROBE_B;
  });
});
