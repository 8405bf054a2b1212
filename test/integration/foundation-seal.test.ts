import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const dirs: string[] = [];
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop();
  for (const dir of dirs) cleanup(dir);
});
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-seal-'));
  dirs.push(dir);
  return dir;
}
async function start(dir: string, args: string[] = []): Promise<Daemon> {
  const d = await startDaemon({ dev: false, dir, args });
  daemons.push(d);
  return d;
}
async function stop(d: Daemon): Promise<void> {
  expect(await d.stop()).toBe(0);
  daemons.splice(daemons.indexOf(d), 1);
}

// The keychain tests need a Secret Service; scripts/with-keyring.sh starts one and says whether it works.
const secretService = process.env.KEYHOLD_SECRET_SERVICE === '1';
const skipReason =
  process.env.KEYHOLD_SECRET_SERVICE_UNAVAILABLE ?? 'not run under scripts/with-keyring.sh (use `npm test`)';
if (!secretService) process.stderr.write(`foundation-seal: keychain tests skipped: ${skipReason}\n`);

describe.skipIf(!secretService)('keychain unseal (real Secret Service: gnome-keyring)', () => {
  it('init stores the master key in the keychain; a restarted daemon unseals itself; seal and unseal work', async () => {
    const dir = newDir();
    let d = await start(dir);
    const before = await d.cli(['status', '--format', 'json']);
    expect(before.exitCode).toBe(2);
    expect(JSON.parse(before.stdout)).toMatchObject({ initialized: false, sealed: true });

    const init = await d.cli(['operator', 'init', '--format', 'json'], { token: null });
    expect(init.exitCode, init.stderr).toBe(0);
    const { recovery_key: recovery, root_token: root, keychain } = JSON.parse(init.stdout);
    expect(keychain).toBe(true);
    expect(recovery).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(root).toMatch(/^hvs\./);

    const seal = (await d.req('GET', 'sys/seal-status', undefined, { token: null })).body;
    expect(seal).toMatchObject({
      initialized: true,
      sealed: false,
      keychain: 'secret-service',
      keychain_unseal: true,
      storage_type: 'file',
    });
    // An independent client (libsecret's secret-tool) finds the master key under service "keyhold":
    // the same 32 bytes the recovery key encodes.
    const found = execFileSync('secret-tool', ['search', '--all', 'service', 'keyhold'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(found).toMatch(/storage-[0-9a-f-]{36}/);
    expect(found).toContain(`secret = ${recovery}`);

    expect(
      (await d.req('PUT', 'sys/policies/acl/kept', { policy: 'path "a" { capabilities = ["read"] }' }, { token: root }))
        .status,
    ).toBe(204);
    await stop(d);

    d = await start(dir);
    const after = await d.cli(['status', '--format', 'json']);
    expect(after.exitCode, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ initialized: true, sealed: false });
    expect((await d.req('GET', 'sys/policies/acl/kept', undefined, { token: root })).body.data.name).toBe('kept');

    const sealed = await d.cli(['operator', 'seal'], { token: root });
    expect(sealed.exitCode, sealed.stderr).toBe(0);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(503);
    const un = await d.cli(['operator', 'unseal'], { input: recovery + '\n', token: null });
    expect(un.exitCode, un.stderr).toBe(0);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    await stop(d);
  });
});

describe('recovery-key unseal (no keychain)', () => {
  it('starts sealed after a restart, answers 503, and unseals with the recovery key from stdin', async () => {
    const dir = newDir();
    let d = await start(dir, ['--keychain', 'none']);
    const health = await d.req('GET', 'sys/health', undefined, { token: null });
    expect(health.status).toBe(501);
    const init = await d.cli(['operator', 'init', '--no-keychain'], { token: null });
    expect(init.exitCode, init.stderr).toBe(0);
    const recovery = /Unseal Key 1: (\S+)/.exec(init.stdout)![1]!;
    const root = /Initial Root Token: (\S+)/.exec(init.stdout)![1]!;
    expect(init.stdout).toMatch(/initialized with 1 key share and a key threshold of 1/);
    expect(init.stdout).toMatch(/after each start, unseal with 1 of these keys \(`keyhold operator unseal`\)/);
    // Unsealed right after init.
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    expect((await d.req('POST', 'sys/init', {}, { token: null })).status).toBe(400);
    await stop(d);

    d = await start(dir, ['--keychain', 'none']);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      initialized: true,
      sealed: true,
      keychain_unseal: false,
    });
    expect((await d.req('GET', 'sys/health', undefined, { token: null })).status).toBe(503);
    for (const [m, p] of [
      ['GET', 'sys/mounts'],
      ['GET', 'auth/token/lookup-self'],
      ['LIST', 'sys/policies/acl'],
      ['POST', 'transit/encrypt/k'],
      ['GET', 'no/such/path'],
    ] as const) {
      const r = await d.req(m, p, m === 'POST' ? {} : undefined, { token: root });
      expect(r.status, `${m} ${p}`).toBe(503);
      expect(r.body.errors).toEqual(['Vault is sealed']);
    }
    const st = await d.cli(['status']);
    expect(st.exitCode).toBe(2);
    expect(st.stdout).toMatch(/sealed\s+true/);

    const wrong = await d.cli(['operator', 'unseal'], { input: Buffer.alloc(32, 1).toString('base64'), token: null });
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toMatch(/^Error: invalid key: the unseal key does not open this storage/);
    const junk = await d.cli(['operator', 'unseal'], { input: 'not-a-key', token: null });
    expect(junk.exitCode).toBe(2);
    expect(junk.stderr).toMatch(/'key' must be a valid hex or base64 string/);
    const empty = await d.cli(['operator', 'unseal'], { input: '', token: null });
    expect(empty.exitCode).toBe(1);

    const un = await d.cli(['operator', 'unseal'], { input: recovery + '\n', token: null });
    expect(un.exitCode, un.stderr).toBe(0);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    expect((await d.cli(['status'])).exitCode).toBe(0);
    // The recovery key never shows up in the daemon's output.
    expect(d.output()).not.toContain(recovery);
    await stop(d);
  });

  it('falls back to the recovery key when init asks for the keychain but none answers', async () => {
    const dir = newDir();
    const d = await start(dir, ['--keychain', 'none']);
    const init = await d.cli(['operator', 'init', '--format', 'json'], { token: null });
    expect(init.exitCode).toBe(0);
    expect(JSON.parse(init.stdout).keychain).toBe(false);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body.keychain_unseal).toBe(false);
    await stop(d);
  });

  it('starts sealed and falls back to the recovery key when the OS keychain cannot be reached', async () => {
    const dir = newDir();
    // The default keychain ("os"), but no D-Bus session to find a Secret Service on.
    const noBus = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/keyhold-test-bus' };
    let d = await startDaemon({ dev: false, dir, env: noBus });
    daemons.push(d);
    const init = await d.cli(['operator', 'init', '--format', 'json'], { token: null });
    expect(init.exitCode, init.stderr).toBe(0);
    const { keychain, recovery_key: recovery, root_token: root } = JSON.parse(init.stdout);
    expect(keychain).toBe(false);
    expect(d.output()).toMatch(/could not store master key in keychain/);
    await stop(d);
    d = await startDaemon({ dev: false, dir, env: noBus });
    daemons.push(d);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    expect((await d.cli(['operator', 'unseal'], { input: recovery, token: null })).exitCode).toBe(0);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    await stop(d);
  });

  it('requires sudo (root) to seal, and the seal forgets tokens until unsealed', async () => {
    const dir = newDir();
    const d = await start(dir, ['--keychain', 'none']);
    const init = JSON.parse((await d.cli(['operator', 'init', '--format', 'json'], { token: null })).stdout);
    const child = await d.req('POST', 'auth/token/create', { policies: ['default'] }, { token: init.root_token });
    const t = child.body.auth.client_token;
    expect((await d.req('POST', 'sys/seal', {}, { token: t })).status).toBe(403);
    expect((await d.req('POST', 'sys/seal', {}, { token: init.root_token })).status).toBe(204);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(503);
    expect((await d.req('POST', 'sys/unseal', { key: init.recovery_key }, { token: null })).body.sealed).toBe(false);
    expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: t })).status).toBe(200);
    await stop(d);
  });
});
