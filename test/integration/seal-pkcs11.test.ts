/**
 * HSM auto-unseal: `seal "pkcs11"` on a real SoftHSM2 token (a private token directory per run, see
 * test/support/softhsm.ts). The master key is wrapped by an AES key generated inside the token.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { SOFTHSM_MODULE, createSoftHsm, softhsmMissing, type SoftHsm } from '../support/softhsm.js';

const missing = softhsmMissing();
if (missing) process.stderr.write(`seal-pkcs11: skipped: ${missing}\n`);

const PIN = 'pin-7fq2k9';
const dirs: string[] = [];
const daemons: Daemon[] = [];
let hsm: SoftHsm;
beforeAll(() => {
  if (missing) return;
  hsm = createSoftHsm();
  hsm.initToken('keyhold-seal', PIN);
});
afterAll(async () => {
  for (const d of daemons) await d.stop();
  for (const dir of dirs) cleanup(dir);
  hsm?.cleanup();
});
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-hsmseal-'));
  dirs.push(dir);
  return dir;
}
async function start(dir: string, args: string[] = [], env: Record<string, string> = {}): Promise<Daemon> {
  const d = await startDaemon({
    dev: false,
    dir,
    args: ['--keychain', 'none', ...args],
    env: { ...hsm.env, VAULT_HSM_PIN: PIN, ...env },
  });
  daemons.push(d);
  return d;
}
async function stop(d: Daemon): Promise<void> {
  await d.stop();
  daemons.splice(daemons.indexOf(d), 1);
}
async function waitUnsealed(d: Daemon, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if ((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed === false) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`still sealed after ${ms} ms:\n${d.output()}`);
}
/** Vault's stanza; the pin comes from VAULT_HSM_PIN (as Vault's docs advise), not the file. */
function hsmConfig(dir: string, opts: { disabled?: boolean; label?: string } = {}): string {
  const file = join(dir, opts.disabled ? 'hsm-disabled.hcl' : 'hsm.hcl');
  writeFileSync(
    file,
    `seal "pkcs11" {\n  lib = "${SOFTHSM_MODULE}"\n  token_label = "keyhold-seal"\n  key_label = "${opts.label ?? 'keyhold-master'}"\n  mechanism = "0x1087"\n  generate_key = "true"\n${opts.disabled ? '  disabled = "true"\n' : ''}}\n`,
  );
  return file;
}

describe.skipIf(missing !== null)('seal "pkcs11" (SoftHSM2)', () => {
  it('init generates the AES key in the token and returns recovery keys; restarts unseal by themselves; seal-status type pkcs11', async () => {
    const dir = newDir();
    const cfg = hsmConfig(dir);
    let node = await start(dir, ['--config', cfg]);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'pkcs11',
      initialized: false,
      recovery_seal: true,
    });
    const init = await node.cli(
      ['operator', 'init', '-recovery-shares=3', '-recovery-threshold=2', '--format', 'json'],
      { token: null },
    );
    expect(init.exitCode, init.stderr).toBe(0);
    const out = JSON.parse(init.stdout);
    expect(out).toMatchObject({ unseal_keys_b64: [], recovery_keys_shares: 3, recovery_keys_threshold: 2 });
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'pkcs11',
      sealed: false,
      t: 2,
      n: 3,
      recovery_seal: true,
      recovery_seal_type: 'shamir',
    });
    await node.req('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '2' } }, { token: out.root_token });
    await node.req('POST', 'secret/data/h', { data: { v: 'in-hsm' } }, { token: out.root_token });
    await stop(node);

    // The key lives in the token and cannot leave it (pkcs11-tool, an independent PKCS#11 client).
    const objs = hsm.tool([
      '--token-label',
      'keyhold-seal',
      '--login',
      '--pin',
      PIN,
      '--list-objects',
      '--type',
      'secrkey',
    ]);
    expect(objs).toMatch(/Secret Key Object; AES length 32/);
    expect(objs).toMatch(/label:\s+keyhold-master/);
    expect(objs).toMatch(/Access:.*sensitive/);
    expect(objs).toMatch(/never extractable/);

    node = await start(dir, ['--config', cfg]);
    await waitUnsealed(node);
    expect(node.output()).toMatch(/Seal: pkcs11/);
    expect((await node.req('GET', 'secret/data/h', undefined, { token: out.root_token })).body.data.data.v).toBe(
      'in-hsm',
    );
    // After sys/seal the recovery keys unseal (the HSM unwraps once they are verified).
    expect((await node.req('PUT', 'sys/seal', {}, { token: out.root_token })).status).toBe(204);
    const un = await node.cli(['operator', 'unseal', '--format', 'json'], {
      input: `${out.recovery_keys_b64[1]}\n${out.recovery_keys_b64[0]}\n`,
      token: null,
    });
    expect(JSON.parse(un.stdout).sealed).toBe(false);
    expect(node.output()).not.toContain(PIN);
    await stop(node);

    // A wrong pin: the daemon starts sealed, says why (never the pin), and keeps trying.
    node = await start(dir, ['--config', cfg], { VAULT_HSM_PIN: 'wrong-pin-0000' });
    await new Promise((r) => setTimeout(r, 1500));
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    expect(node.output()).toMatch(/auto-unseal failed; retrying/);
    expect(node.output()).not.toContain('wrong-pin-0000');
    await stop(node);
  });

  it('migrates a Shamir (keychain-less) store to the HSM seal and back with `operator unseal -migrate`', async () => {
    const dir = newDir();
    let node = await start(dir);
    const init = (
      await node.req('PUT', 'sys/init', { secret_shares: 2, secret_threshold: 2, keychain: false }, { token: null })
    ).body;
    const shares: string[] = init.keys_base64;
    await stop(node);

    node = await start(dir, ['--config', hsmConfig(dir, { label: 'migrated-key' })]);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      migration: true,
    });
    const mig = await node.cli(['operator', 'unseal', '-migrate', '--format', 'json'], {
      input: shares.join('\n'),
      token: null,
    });
    expect(mig.exitCode, mig.stderr).toBe(0);
    expect(JSON.parse(mig.stdout)).toMatchObject({ sealed: false, type: 'pkcs11', recovery_seal: true, t: 2, n: 2 });
    await stop(node);
    node = await start(dir, ['--config', hsmConfig(dir, { label: 'migrated-key' })]);
    await waitUnsealed(node);
    await stop(node);

    node = await start(dir, ['--config', hsmConfig(dir, { label: 'migrated-key', disabled: true })]);
    const back = await node.cli(['operator', 'unseal', '-migrate', '--format', 'json'], {
      input: shares.join('\n'),
      token: null,
    });
    expect(JSON.parse(back.stdout)).toMatchObject({ sealed: false, type: 'shamir', recovery_seal: false, t: 2, n: 2 });
    await stop(node);
    node = await start(dir);
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body.sealed).toBe(true);
    await node.req('PUT', 'sys/unseal', { key: shares[1] }, { token: null });
    expect((await node.req('PUT', 'sys/unseal', { key: shares[0] }, { token: null })).body.sealed).toBe(false);
    expect((await node.req('GET', 'sys/mounts', undefined, { token: init.root_token })).status).toBe(200);
    await stop(node);
  });

  it('RSA-OAEP (0x0009, SHA-1 as SoftHSM2 offers): a 2048-bit key pair generated in the token wraps the master key', async () => {
    const dir = newDir();
    const env = { VAULT_HSM_MECHANISM: '0x0009', VAULT_HSM_RSA_OAEP_HASH: 'sha1', VAULT_HSM_KEY_LABEL: 'rsa-master' };
    let node = await start(dir, ['--config', hsmConfig(dir)], env);
    const init = await node.req('PUT', 'sys/init', { recovery_shares: 1, recovery_threshold: 1 }, { token: null });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    await stop(node);
    const objs = hsm.tool([
      '--token-label',
      'keyhold-seal',
      '--login',
      '--pin',
      PIN,
      '--list-objects',
      '--type',
      'privkey',
    ]);
    expect(objs).toMatch(/Private Key Object; RSA[\s\S]*label:\s+rsa-master/);
    node = await start(dir, ['--config', hsmConfig(dir)], env);
    await waitUnsealed(node);
    expect((await node.req('GET', 'sys/mounts', undefined, { token: init.body.root_token })).status).toBe(200);
    await stop(node);
  });

  it('VAULT_SEAL_TYPE=pkcs11 with VAULT_HSM_* configures the seal without a stanza', async () => {
    const dir = newDir();
    const node = await start(dir, [], {
      VAULT_SEAL_TYPE: 'pkcs11',
      VAULT_HSM_LIB: SOFTHSM_MODULE,
      VAULT_HSM_TOKEN_LABEL: 'keyhold-seal',
      VAULT_HSM_KEY_LABEL: 'env-key',
      VAULT_HSM_GENERATE_KEY: 'true',
    });
    expect((await node.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'pkcs11',
      recovery_seal: true,
    });
    const init = await node.req('PUT', 'sys/init', {}, { token: null });
    expect(init.status, JSON.stringify(init.body)).toBe(200);
    expect(init.body.recovery_keys).toHaveLength(1);
    expect(
      hsm.tool(['--token-label', 'keyhold-seal', '--login', '--pin', PIN, '--list-objects', '--type', 'secrkey']),
    ).toMatch(/label:\s+env-key/);
    await stop(node);
  });

  it('bad stanzas stop the server naming the parameter', async () => {
    const dir = newDir();
    const file = join(dir, 'bad.hcl');
    writeFileSync(
      file,
      `seal "pkcs11" {\n  lib = "${SOFTHSM_MODULE}"\n  token_label = "keyhold-seal"\n  key_label = "k"\n  mechanism = "0x1085"\n}\n`,
    );
    const d = await startDaemon({
      dev: false,
      dir,
      args: ['--keychain', 'none', '--config', file],
      env: { ...hsm.env, VAULT_HSM_PIN: PIN },
      wait: false,
    });
    expect(await new Promise<number | null>((r) => d.proc.once('exit', (c) => r(c)))).toBe(1);
    expect(d.output()).toMatch(/seal "pkcs11": mechanism "0x1085" is not supported/);
  });
});
