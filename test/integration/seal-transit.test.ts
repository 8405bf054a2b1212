/**
 * Transit auto-unseal with two real daemons: "unsealer" serves transit; "node" has
 * `seal "transit" { address, token, key_name, mount_path }` in its config. Also seal migration
 * shamir -> transit -> shamir with `operator unseal -migrate`.
 */
import { createDecipheriv } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedRecord } from '../support/stored-record.js';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

const dirs: string[] = [];
const daemons: Daemon[] = [];
afterAll(async () => {
  for (const d of daemons) await d.stop();
  for (const dir of dirs) cleanup(dir);
});
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-tseal-'));
  dirs.push(dir);
  return dir;
}
async function start(dir: string, args: string[] = [], env: Record<string, string | undefined> = {}): Promise<Daemon> {
  const d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none', ...args], env });
  daemons.push(d);
  return d;
}
async function stop(d: Daemon): Promise<void> {
  await d.stop();
  daemons.splice(daemons.indexOf(d), 1);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUnsealed(d: Daemon, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed === false) return;
    await sleep(200);
  }
  throw new Error(`still sealed after ${ms} ms:\n${d.output()}`);
}
/** The file backend's record at `key` (<storage>/data/a/b/_leaf; these keys need no escaping). */
let unsealer: Daemon;
let unsealerDir: string;
let unsealerKey: string;
let unsealerRoot: string;
let sealToken: string;

beforeAll(async () => {
  unsealerDir = newDir();
  unsealer = await start(unsealerDir);
  const init = (await unsealer.req('PUT', 'sys/init', { keychain: false }, { token: null })).body;
  unsealerKey = init.keys_base64[0];
  unsealerRoot = init.root_token;
  expect((await unsealer.req('POST', 'sys/mounts/transit', { type: 'transit' }, { token: unsealerRoot })).status).toBe(
    204,
  );
  expect((await unsealer.req('POST', 'transit/keys/autounseal', {}, { token: unsealerRoot })).status).toBeLessThan(300);
  // The policy Vault's docs give the seal token: update on encrypt and decrypt of the key.
  const policy =
    'path "transit/encrypt/autounseal" { capabilities = ["update"] }\npath "transit/decrypt/autounseal" { capabilities = ["update"] }';
  expect((await unsealer.req('PUT', 'sys/policies/acl/autounseal', { policy }, { token: unsealerRoot })).status).toBe(
    204,
  );
  const tok = await unsealer.req(
    'POST',
    'auth/token/create',
    { policies: ['autounseal'], no_parent: true, period: '24h' },
    { token: unsealerRoot },
  );
  sealToken = tok.body.auth.client_token;
});

/** A server config in Vault's HCL with the seal stanza Vault documents. */
function transitConfig(dir: string, disabled = false): string {
  const file = join(dir, disabled ? 'seal-disabled.hcl' : 'seal.hcl');
  writeFileSync(
    file,
    `# auto-unseal by the other keyhold\nseal "transit" {\n  address = "unix://${unsealer.socket}"\n  token = "${sealToken}"\n  key_name = "autounseal"\n  mount_path = "transit/"\n${disabled ? '  disabled = "true"\n' : ''}}\n`,
  );
  return file;
}

describe('seal "transit" (auto-unseal by another keyhold)', () => {
  it('init returns recovery keys, restart unseals unattended, the master key is wrapped by the other daemon', async () => {
    const dir = newDir();
    const cfg = transitConfig(dir);
    let node = await start(dir, ['--config', cfg]);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'transit',
      initialized: false,
      sealed: true,
      recovery_seal: true,
    });
    const refused = await node.req('PUT', 'sys/init', { secret_shares: 5, secret_threshold: 3 }, { token: null });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([
      'parameters secret_shares,secret_threshold not applicable to seal type transit',
    ]);
    expect(
      (await node.req('PUT', 'sys/init', { recovery_shares: 0, recovery_threshold: 0 }, { token: null })).body.errors,
    ).toEqual(['recovery configuration must specify a positive number of shares']);

    const init = await node.cli(
      ['operator', 'init', '-recovery-shares=3', '-recovery-threshold=2', '--format', 'json'],
      { token: null },
    );
    expect(init.exitCode, init.stderr).toBe(0);
    const out = JSON.parse(init.stdout);
    expect(out).toMatchObject({
      unseal_keys_b64: [],
      unseal_keys_hex: [],
      recovery_keys_shares: 3,
      recovery_keys_threshold: 2,
    });
    expect(out.recovery_keys_hex).toHaveLength(3);
    for (const k of out.recovery_keys_hex) expect(k).toMatch(/^[0-9a-f]{66}$/);
    const recovery: string[] = out.recovery_keys_b64;
    const root: string = out.root_token;
    const st = (await node.req('GET', 'sys/seal-status', undefined, { token: null })).body;
    expect(st).toMatchObject({
      type: 'transit',
      initialized: true,
      sealed: false,
      t: 2,
      n: 3,
      recovery_seal: true,
      recovery_seal_type: 'shamir',
      migration: false,
    });
    expect(
      (await node.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: root })).status,
    ).toBe(204);
    expect(
      (await node.req('POST', 'secret/data/app', { data: { password: 'kept-secret-42' } }, { token: root })).status,
    ).toBe(200);
    await stop(node);

    // Independent check of the layout: the stored blob is the other daemon's transit ciphertext; its
    // plaintext (decrypted by the unsealer) is the 32-byte key that opens core/keyring (AES-256-GCM).
    const blob = JSON.parse(storedRecord(join(dir, 'data'), 'core/hsm/barrier-unseal-keys')!.toString());
    expect(blob).toMatchObject({ seal_type: 'transit', key_id: 'v1' });
    expect(blob.ciphertext).toMatch(/^vault:v1:/);
    const dec = await unsealer.req(
      'POST',
      'transit/decrypt/autounseal',
      { ciphertext: blob.ciphertext },
      { token: unsealerRoot },
    );
    const master = Buffer.from(dec.body.data.plaintext, 'base64');
    expect(master.length).toBe(32);
    const ring = storedRecord(join(dir, 'data'), 'core/keyring')!;
    const d = createDecipheriv('aes-256-gcm', master, ring.subarray(1, 13));
    d.setAAD(Buffer.from('core/keyring'));
    d.setAuthTag(ring.subarray(ring.length - 16));
    expect(
      JSON.parse(Buffer.concat([d.update(ring.subarray(13, ring.length - 16)), d.final()]).toString()).barrier_key,
    ).toMatch(/^[A-Za-z0-9+/]{43}=$/);

    // Restart: unsealed without a person.
    node = await start(dir, ['--config', cfg]);
    await waitUnsealed(node);
    expect(node.output()).toMatch(/Seal: transit/);
    expect((await node.req('GET', 'secret/data/app', undefined, { token: root })).body.data.data.password).toBe(
      'kept-secret-42',
    );

    // sys/seal, then the recovery keys unseal (the transit server is reachable): 2 of 3.
    expect((await node.req('PUT', 'sys/seal', {}, { token: root })).status).toBe(204);
    expect((await node.req('PUT', 'sys/unseal', { key: recovery[0] }, { token: null })).body).toMatchObject({
      sealed: true,
      progress: 1,
      t: 2,
      n: 3,
    });
    const forged = Buffer.from(recovery[1]!, 'base64');
    forged[5] ^= 1;
    const bad = await node.req('PUT', 'sys/unseal', { key: forged.toString('base64') }, { token: null });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^failed to verify recovery key/);
    const un = await node.cli(['operator', 'unseal', '--format', 'json'], {
      input: `${recovery[2]}\n${recovery[1]}\n`,
      token: null,
    });
    expect(un.exitCode, un.stderr).toBe(0);
    expect(JSON.parse(un.stdout).sealed).toBe(false);

    // Rekey of the recovery key (3/2 -> 4/3), then of the barrier key with recovery keys (no shares returned).
    const rk = (
      await node.req('PUT', 'sys/rekey-recovery-key/init', { secret_shares: 4, secret_threshold: 3 }, { token: null })
    ).body;
    expect(rk).toMatchObject({ started: true, n: 4, t: 3, required: 2 });
    await node.req('PUT', 'sys/rekey-recovery-key/update', { key: recovery[0], nonce: rk.nonce }, { token: null });
    const rdone = (
      await node.req('PUT', 'sys/rekey-recovery-key/update', { key: recovery[1], nonce: rk.nonce }, { token: null })
    ).body;
    expect(rdone.complete).toBe(true);
    const recovery2: string[] = rdone.keys_base64;
    expect(recovery2).toHaveLength(4);
    const bk = (await node.req('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 3 }, { token: null }))
      .body;
    expect(bk).toMatchObject({ started: true, n: 1, t: 1, required: 3 });
    for (const k of recovery2.slice(0, 2))
      expect(
        (await node.req('PUT', 'sys/rekey/update', { key: k, nonce: bk.nonce }, { token: null })).body.complete,
      ).toBeUndefined();
    const bdone = (await node.req('PUT', 'sys/rekey/update', { key: recovery2[3], nonce: bk.nonce }, { token: null }))
      .body;
    expect(bdone).toMatchObject({ complete: true, keys: [], keys_base64: [] });
    await stop(node);
    const blob2 = JSON.parse(storedRecord(join(dir, 'data'), 'core/hsm/barrier-unseal-keys')!.toString());
    expect(blob2.ciphertext).not.toBe(blob.ciphertext);

    // The unsealer is down while the node restarts: the node waits sealed and retries, then unseals by itself.
    await stop(unsealer);
    node = await start(dir, ['--config', cfg]);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    await sleep(1500);
    expect(node.output()).toMatch(/auto-unseal failed; retrying/);
    expect(node.output()).not.toContain(sealToken);
    // Recovery keys cannot open the data without the seal: 503 naming the seal server, not a 500.
    for (const k of recovery2.slice(0, 2)) await node.req('PUT', 'sys/unseal', { key: k }, { token: null });
    const down = await node.req('PUT', 'sys/unseal', { key: recovery2[2] }, { token: null });
    expect(down.status).toBe(503);
    expect(down.body.errors[0]).toMatch(/^transit seal: cannot reach unix:\/\//);
    unsealer = await start(unsealerDir);
    expect((await unsealer.req('PUT', 'sys/unseal', { key: unsealerKey }, { token: null })).body.sealed).toBe(false);
    await waitUnsealed(node, 40_000);
    expect((await node.req('GET', 'secret/data/app', undefined, { token: root })).body.data.data.password).toBe(
      'kept-secret-42',
    );
    // Old recovery shares are gone; the new ones work.
    expect((await node.req('PUT', 'sys/seal', {}, { token: root })).status).toBe(204);
    for (const k of recovery2.slice(1, 3)) await node.req('PUT', 'sys/unseal', { key: k }, { token: null });
    expect((await node.req('PUT', 'sys/unseal', { key: recovery2[0] }, { token: null })).body.sealed).toBe(false);
    await stop(node);
  });

  it('bad seal config stops the server with one line naming the parameter', async () => {
    const dir = newDir();
    const file = join(dir, 'bad.hcl');
    writeFileSync(
      file,
      'seal "transit" {\n  address = "http://127.0.0.1:1"\n  token = "t"\n  mount_path = "transit/"\n}\n',
    );
    const d = await startDaemon({ dev: false, dir, args: ['--keychain', 'none', '--config', file], wait: false });
    daemons.push(d);
    const code = await new Promise<number | null>((r) => d.proc.once('exit', (c) => r(c)));
    daemons.splice(daemons.indexOf(d), 1);
    expect(code).toBe(1);
    expect(d.output()).toMatch(/seal "transit": key_name is required/);
    writeFileSync(file, JSON.stringify({ seal: { awskms: { region: 'x' } } }));
    const d2 = await startDaemon({ dev: false, dir, args: ['--keychain', 'none', '--config', file], wait: false });
    expect(await new Promise<number | null>((r) => d2.proc.once('exit', (c) => r(c)))).toBe(1);
    expect(d2.output()).toMatch(/seal type "awskms" is not supported|seal.*"awskms" is not supported/);
  });

  it('VAULT_TRANSIT_SEAL_* environment variables win over the stanza (Vault wrapper precedence)', async () => {
    const dir = newDir();
    // Vault's JSON config form of the stanza.
    const file = join(dir, 'env.json');
    writeFileSync(
      file,
      JSON.stringify({
        seal: { transit: { address: 'http://127.0.0.1:1', token: 'wrong', key_name: 'nope', mount_path: 'nowhere/' } },
      }),
    );
    const node = await start(dir, ['--config', file], {
      VAULT_TRANSIT_SEAL_ADDR: `unix://${unsealer.socket}`,
      VAULT_TRANSIT_SEAL_TOKEN: sealToken,
      VAULT_TRANSIT_SEAL_KEY_NAME: 'autounseal',
      VAULT_TRANSIT_SEAL_MOUNT_PATH: 'transit/',
    });
    const init = await node.req('PUT', 'sys/init', {}, { token: null });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    expect(init.body.recovery_keys).toHaveLength(1);
    await stop(node);
  });
});

describe('seal migration with `operator unseal -migrate`', () => {
  it('shamir (3/2) -> transit: old shares become recovery keys; transit -> shamir: recovery keys become unseal keys', async () => {
    const dir = newDir();
    let node = await start(dir);
    const init = (
      await node.req('PUT', 'sys/init', { secret_shares: 3, secret_threshold: 2, keychain: false }, { token: null })
    ).body;
    const shares: string[] = init.keys_base64;
    expect(
      (
        await node.req(
          'POST',
          'sys/mounts/secret',
          { type: 'kv', options: { version: '2' } },
          { token: init.root_token },
        )
      ).status,
    ).toBe(204);
    await node.req('POST', 'secret/data/m', { data: { v: 'migrated' } }, { token: init.root_token });
    await stop(node);

    // shamir -> transit
    const cfg = transitConfig(dir);
    node = await start(dir, ['--config', cfg]);
    expect(node.output()).toMatch(/migration to transit pending/);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      sealed: true,
      migration: true,
      t: 2,
      n: 3,
    });
    expect((await node.req('PUT', 'sys/unseal', { key: shares[0] }, { token: null })).body.errors).toEqual([
      'migrate option not provided and seal migration is pending',
    ]);
    const mig = await node.cli(['operator', 'unseal', '-migrate', '--format', 'json'], {
      input: `${shares[0]}\n${shares[2]}\n`,
      token: null,
    });
    expect(mig.exitCode, mig.stderr).toBe(0);
    expect(JSON.parse(mig.stdout)).toMatchObject({
      sealed: false,
      type: 'transit',
      migration: false,
      recovery_seal: true,
      t: 2,
      n: 3,
    });
    await stop(node);
    node = await start(dir, ['--config', cfg]);
    await waitUnsealed(node);
    expect((await node.req('GET', 'secret/data/m', undefined, { token: init.root_token })).body.data.data.v).toBe(
      'migrated',
    );
    // The old unseal shares are now the recovery keys.
    expect((await node.req('PUT', 'sys/seal', {}, { token: init.root_token })).status).toBe(204);
    await node.req('PUT', 'sys/unseal', { key: shares[1] }, { token: null });
    expect((await node.req('PUT', 'sys/unseal', { key: shares[2] }, { token: null })).body.sealed).toBe(false);
    await stop(node);

    // A config without the transit stanza refuses to start, saying how to migrate.
    const none = await startDaemon({ dev: false, dir, args: ['--keychain', 'none'], wait: false });
    expect(await new Promise<number | null>((r) => none.proc.once('exit', (c) => r(c)))).toBe(1);
    expect(none.output()).toMatch(/storage is sealed by seal "transit".*disabled = "true"/);

    // transit -> shamir: the stanza marked disabled.
    const off = transitConfig(dir, true);
    node = await start(dir, ['--config', off]);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'transit',
      sealed: true,
      migration: true,
    });
    for (const k of [shares[1], shares[0]])
      await node.req('PUT', 'sys/unseal', { key: k, migrate: true }, { token: null });
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      sealed: false,
      migration: false,
      recovery_seal: false,
      t: 2,
      n: 3,
    });
    await stop(node);
    node = await start(dir);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      sealed: true,
    });
    await node.req('PUT', 'sys/unseal', { key: shares[2] }, { token: null });
    expect((await node.req('PUT', 'sys/unseal', { key: shares[0] }, { token: null })).body.sealed).toBe(false);
    expect((await node.req('GET', 'secret/data/m', undefined, { token: init.root_token })).body.data.data.v).toBe(
      'migrated',
    );
    expect(storedRecord(join(dir, 'data'), 'core/hsm/barrier-unseal-keys')).toBeNull();
    await stop(node);
  });
});

const secretService = process.env.KEYHOLD_SECRET_SERVICE === '1';

describe.skipIf(!secretService)('seal migration and the OS keychain (real Secret Service: gnome-keyring)', () => {
  it('keychain seal -> transit drops the keychain entry; transit -> keychain seal stores the recovery key there and restarts unseal by themselves', async () => {
    const { execFileSync } = await import('node:child_process');
    const secrets = () => {
      try {
        return execFileSync('secret-tool', ['search', '--all', 'service', 'keyhold'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
        });
      } catch {
        return '';
      }
    };
    const dir = newDir();
    let node = await startDaemon({ dev: false, dir });
    daemons.push(node);
    const init = (await node.req('PUT', 'sys/init', {}, { token: null })).body;
    expect(init.keychain).toBe(true);
    const key: string = init.keys_base64[0];
    expect(secrets()).toContain(`secret = ${key}`);
    await stop(node);

    node = await startDaemon({ dev: false, dir, args: ['--config', transitConfig(dir)] });
    daemons.push(node);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      sealed: true,
      migration: true,
      keychain_unseal: true,
    });
    expect((await node.req('PUT', 'sys/unseal', { key, migrate: true }, { token: null })).body).toMatchObject({
      sealed: false,
      type: 'transit',
      keychain_unseal: false,
    });
    expect(secrets()).not.toContain(`secret = ${key}`);
    await stop(node);

    node = await startDaemon({ dev: false, dir, args: ['--config', transitConfig(dir, true)] });
    daemons.push(node);
    expect((await node.req('PUT', 'sys/unseal', { key, migrate: true }, { token: null })).body).toMatchObject({
      sealed: false,
      type: 'shamir',
      keychain_unseal: true,
    });
    expect(secrets()).toContain(`secret = ${key}`);
    await stop(node);
    node = await startDaemon({ dev: false, dir });
    daemons.push(node);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      sealed: false,
      type: 'shamir',
    });
    expect((await node.req('GET', 'sys/mounts', undefined, { token: init.root_token })).status).toBe(200);
    await stop(node);
  });
});
