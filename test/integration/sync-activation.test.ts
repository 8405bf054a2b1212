/**
 * `sys/activation-flags` and `sys/activation-flags/secrets-sync/activate` as Vault has them: with the
 * daemon requiring activation, every sys/sync endpoint refuses (400) until the one-time activation,
 * which survives a restart; unknown features are refused naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, cleanup, type Daemon } from '../support/daemon.js';

let d: Daemon;
let token = '';
let recoveryKey = '';
const env = { KEYHOLD_SYNC_REQUIRE_ACTIVATION: 'true' };
beforeAll(async () => {
  // File storage (not dev mode): the flag must survive a restart.
  d = await startDaemon({ dev: false, args: ['--keychain', 'none'], env });
  const init = await d.req('POST', 'sys/init', { keychain: false }, { token: null });
  expect(init.status, init.text).toBe(200);
  recoveryKey = init.body.keys[0];
  token = init.body.root_token;
}, 60_000);
afterAll(async () => {
  await d?.kill();
  if (d) cleanup(d.dir);
});

describe('activation flags', () => {
  it('secrets-sync starts unactivated and every sys/sync endpoint says so', async () => {
    const flags = await d.req('GET', 'sys/activation-flags', undefined, { token });
    expect(flags.status, flags.text).toBe(200);
    expect(flags.body.data).toEqual({ activated: [], unactivated: ['secrets-sync'] });
    for (const [method, path] of [
      ['GET', 'sys/sync/config'],
      ['LIST', 'sys/sync/destinations'],
      ['POST', 'sys/sync/destinations/hosting-project/x'],
    ] as const) {
      const r = await d.req(
        method,
        path,
        method === 'POST' ? { access_token: 't', project_id: 'p', deployment_environments: ['production'] } : undefined,
        { token },
      );
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body.errors.join(' ')).toMatch(
        /secrets sync is not activated; activate it once with a write to sys\/activation-flags\/secrets-sync\/activate/,
      );
    }
  });

  it('unknown features are refused naming the field', async () => {
    const r = await d.req('POST', 'sys/activation-flags/no-such-thing/activate', {}, { token });
    expect(r.status).toBe(400);
    expect(r.body.errors.join(' ')).toMatch(/^feature: unknown feature "no-such-thing"/);
  });

  it('activate (PUT or POST, idempotent) opens sys/sync, and survives a restart', async () => {
    const a = await d.req('PUT', 'sys/activation-flags/secrets-sync/activate', {}, { token });
    expect(a.status, a.text).toBe(200);
    expect(a.body.data).toEqual({ activated: ['secrets-sync'], unactivated: [] });
    expect(
      (await d.req('POST', 'sys/activation-flags/secrets-sync/activate', {}, { token })).body.data.activated,
    ).toEqual(['secrets-sync']);
    expect((await d.req('GET', 'sys/sync/config', undefined, { token })).status).toBe(200);
    await d.stop();
    d = await startDaemon({ dev: false, dir: d.dir, args: ['--keychain', 'none'], env });
    expect((await d.req('POST', 'sys/unseal', { key: recoveryKey }, { token: null })).status).toBe(200);
    expect((await d.req('GET', 'sys/activation-flags', undefined, { token })).body.data.activated).toEqual([
      'secrets-sync',
    ]);
    expect((await d.req('GET', 'sys/sync/config', undefined, { token })).status).toBe(200);
  });
});
