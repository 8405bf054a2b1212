/**
 * Barrier key rotation (issue 27 part 3): rotate under write load, every record readable after a
 * restart, a record written under term 1 still opens after three rotations, records at rest name
 * their term, sys/rotate/config bounds, and the CLI's `operator rotate` / `operator key-status`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { storedRecord } from '../support/stored-record.js';

describe('barrier key rotation on file storage', () => {
  let d: Daemon;
  let key: string;
  let root: string;
  beforeAll(async () => {
    d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    const init = await d.req(
      'POST',
      'sys/init',
      { secret_shares: 1, secret_threshold: 1, keychain: false },
      { token: null },
    );
    expect(init.status).toBe(200);
    key = init.body.keys_base64[0];
    root = init.body.root_token;
    expect(
      (await d.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: root })).status,
    ).toBe(204);
  });
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
  });

  it('keeps every record readable through rotations under write load and a restart', { timeout: 60_000 }, async () => {
    const put = (name: string, v: string) => d.req('POST', `secret/data/${name}`, { data: { v } }, { token: root });
    expect((await put('term1', 'written under term 1')).status).toBe(200);
    expect(storedRecord(join(d.dir, 'data'), 'core/mounts')![0]).toBe(1);
    const before = (await d.req('GET', 'sys/key-status', undefined, { token: root })).body.data;
    expect(before.term).toBe(1);

    // Writes at a steady pace while three rotations happen in between.
    const written: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop && i < 400; i++) {
        const r = await put(`load-${i}`, `value ${i}`);
        expect(r.status).toBe(200);
        written.push(`load-${i}`);
      }
    })();
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 80));
      const r = await d.req('POST', 'sys/rotate', {}, { token: root });
      expect(r.status).toBe(204);
    }
    stop = true;
    await writer;
    expect(written.length).toBeGreaterThan(5);
    const after = (await d.req('GET', 'sys/key-status', undefined, { token: root })).body;
    expect(after.data.term).toBe(4);
    // Vault's sys answers carry data at the top level too (hvac reads key_status["term"] there or in data).
    expect(after.term).toBe(4);
    expect(Date.parse(after.data.install_time)).toBeGreaterThan(Date.parse(before.install_time) - 1);

    // A change of the mount table now is sealed under term 4 (layout 0x02 naming the term).
    expect((await d.req('POST', 'sys/mounts/other', { type: 'transit' }, { token: root })).status).toBe(204);
    const rec = storedRecord(join(d.dir, 'data'), 'core/mounts')!;
    expect(rec[0]).toBe(2);
    expect(rec.readUInt32BE(1)).toBe(4);

    await d.stop();
    d = await startDaemon({ dev: false, dir: d.dir, args: ['--keychain', 'none'] });
    const un = await d.req('POST', 'sys/unseal', { key }, { token: null });
    expect(un.body.sealed).toBe(false);
    expect((await d.req('GET', 'sys/key-status', undefined, { token: root })).body.data.term).toBe(4);
    const t1 = await d.req('GET', 'secret/data/term1', undefined, { token: root });
    expect(t1.body.data.data.v).toBe('written under term 1');
    for (const name of written) {
      const r = await d.req('GET', `secret/data/${name}`, undefined, { token: root });
      expect(r.status, name).toBe(200);
      expect(r.body.data.data.v).toBe(`value ${name.slice(5)}`);
    }
    // New writes after the restart use the newest term.
    expect((await put('after-restart', 'x')).status).toBe(200);
    expect((await d.req('GET', 'secret/data/after-restart', undefined, { token: root })).body.data.data.v).toBe('x');
  });

  it('sys/rotate/config: reads Vault defaults, refuses out-of-range values naming the field, stores changes', async () => {
    const r0 = await d.req('GET', 'sys/rotate/config', undefined, { token: root });
    expect(r0.body.data).toEqual({ enabled: true, max_operations: 3865470566, interval: '0s' });
    const bad = await d.req('POST', 'sys/rotate/config', { max_operations: 10 }, { token: root });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^max_operations: /);
    const badI = await d.req('POST', 'sys/rotate/config', { interval: '1h' }, { token: root });
    expect(badI.status).toBe(400);
    expect(badI.body.errors[0]).toMatch(/^interval: /);
    expect(
      (await d.req('POST', 'sys/rotate/config', { max_operations: 2_000_000, interval: '48h' }, { token: root }))
        .status,
    ).toBe(204);
    expect((await d.req('GET', 'sys/rotate/config', undefined, { token: root })).body.data).toEqual({
      enabled: true,
      max_operations: 2_000_000,
      interval: '48h0m0s',
    });
  });

  it('needs sudo: a token without it is refused', async () => {
    await d.req(
      'POST',
      'sys/policies/acl/reader',
      { policy: 'path "sys/*" { capabilities = ["read", "update"] }' },
      { token: root },
    );
    const t = (await d.req('POST', 'auth/token/create', { policies: ['reader'] }, { token: root })).body.auth
      .client_token;
    expect((await d.req('POST', 'sys/rotate', {}, { token: t })).status).toBe(403);
    expect((await d.req('GET', 'sys/key-status', undefined, { token: t })).status).toBe(403);
  });

  it('keyhold operator rotate and key-status', async () => {
    const r = await d.cli(['operator', 'rotate'], { token: root });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr + r.stdout).toMatch(/Success! Rotated key/);
    expect(r.stdout).toMatch(/Key Term\s+5/);
    const s = await d.cli(['operator', 'key-status', '--format', 'json'], { token: root });
    expect(JSON.parse(s.stdout)).toMatchObject({ term: 5 });
    const f = await d.cli(['operator', 'key-status', '--field', 'term'], { token: root });
    expect(f.stdout).toBe('5');
  });
});
