/**
 * Root token regeneration and PGP-encrypted shares (issue 27 part 4): hvac's own key tests with the
 * real hvac library (Debian's python3-hvac), the CLI's generate-root forms, and PGP: init with
 * pgp_keys and root_token_pgp_key, generate-root with pgp_key and rekey with backup, every
 * ciphertext opened by `gpg` with the matching secret key.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { readKey } from 'openpgp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { runScript, vaultBinDir } from './vault-face-support.js';

const PY = '/usr/bin/python3';
const HAS_HVAC = spawnSync(PY, ['-c', 'import hvac'], { stdio: 'ignore' }).status === 0;
const HAS_GPG = spawnSync('gpg', ['--version'], { stdio: 'ignore' }).status === 0;
if (!HAS_HVAC)
  console.warn(
    'ops-generate-root: python3-hvac not installed (scripts/setup-test-env.sh installs it as root); the hvac test is skipped',
  );
if (!HAS_GPG) console.warn('ops-generate-root: gpg not installed; the PGP tests are skipped');

async function initDaemon(shares: number, threshold: number, extra: Record<string, unknown> = {}) {
  const d = await startDaemon({ dev: false, tcp: true, args: ['--keychain', 'none'] });
  const init = await d.req(
    'POST',
    'sys/init',
    { secret_shares: shares, secret_threshold: threshold, keychain: false, ...extra },
    { token: null },
  );
  return { d, init };
}

describe("hvac's tests/integration_tests/api/system_backend/test_key.py", () => {
  it.skipIf(!HAS_HVAC)('passes whole (5 of 5) with the real hvac library', { timeout: 60_000 }, async () => {
    const { d, init } = await initDaemon(5, 3);
    try {
      expect(init.status).toBe(200);
      const r = await execa(
        PY,
        [
          join(ROOT, 'test', 'compat', 'hvac_test_key.py'),
          d.tcp!,
          init.body.root_token,
          JSON.stringify(init.body.keys),
          BIN,
        ],
        { reject: false, timeout: 50_000 },
      );
      const lines = r.stdout.split('\n').filter(Boolean);
      expect(
        lines.filter((l) => l.startsWith('FAIL')),
        r.stderr,
      ).toEqual([]);
      expect(lines.at(-1)).toBe('summary passed=5 failed=0');
    } finally {
      await d.stop();
      cleanup(d.dir);
    }
  });
});

describe('keyhold operator generate-root', () => {
  let d: Daemon;
  let keys: string[];
  let root: string;
  beforeAll(async () => {
    const r = await initDaemon(3, 2);
    d = r.d;
    keys = r.init.body.keys_base64;
    root = r.init.body.root_token;
  });
  afterAll(async () => {
    await d?.stop();
    if (d) cleanup(d.dir);
  });

  it('-init (server-made OTP), shares on stdin, -decode: the new token is a working root token', async () => {
    const init = await d.cli(['operator', 'generate-root', '-init', '--format', 'json'], { token: null });
    expect(init.exitCode, init.stderr).toBe(0);
    const started = JSON.parse(init.stdout);
    expect(started).toMatchObject({ started: true, progress: 0, required: 2, otp_length: 28 });
    expect(started.otp).toMatch(/^[0-9A-Za-z]{28}$/);
    const st = await d.cli(['operator', 'generate-root', '-status', '--format', 'json'], { token: null });
    expect(JSON.parse(st.stdout)).toMatchObject({ started: true, nonce: started.nonce, otp: '' });
    const upd = await d.cli(['operator', 'generate-root', '--format', 'json'], {
      token: null,
      input: `${keys[0]}\n${keys[2]}\n`,
    });
    expect(upd.exitCode, upd.stderr).toBe(0);
    const done = JSON.parse(upd.stdout);
    expect(done.complete).toBe(true);
    expect(done.encoded_token).toBe(done.encoded_root_token);
    expect(done.encoded_token).not.toMatch(/hvs\./);
    const dec = await d.cli(['operator', 'generate-root', `-decode=${done.encoded_token}`, `-otp=${started.otp}`], {
      token: null,
    });
    expect(dec.exitCode, dec.stderr).toBe(0);
    const token = dec.stdout.trim();
    expect(token).toMatch(/^hvs\.[0-9A-Za-z]{24}$/);
    expect(token).not.toBe(root);
    const self = await d.req('GET', 'auth/token/lookup-self', undefined, { token });
    expect(self.status).toBe(200);
    expect(self.body.data.policies).toEqual(['root']);
    expect((await d.req('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
  });

  it('refuses a wrong nonce, a repeated share, a bad OTP length and shares that do not rebuild the key', async () => {
    expect((await d.req('PUT', 'sys/generate-root/attempt', { otp: 'short' }, { token: null })).body.errors[0]).toMatch(
      /^otp: must be 28 characters/,
    );
    const start = (await d.req('PUT', 'sys/generate-root/attempt', {}, { token: null })).body;
    const again = await d.req('PUT', 'sys/generate-root/attempt', {}, { token: null });
    expect(again.status).toBe(400);
    expect(again.body.errors[0]).toMatch(/already in progress/);
    const wrongNonce = await d.req('PUT', 'sys/generate-root/update', { key: keys[0], nonce: 'nope' }, { token: null });
    expect(wrongNonce.status).toBe(400);
    expect(
      (await d.req('PUT', 'sys/generate-root/update', { key: keys[0], nonce: start.nonce }, { token: null })).body
        .progress,
    ).toBe(1);
    const dup = await d.req('PUT', 'sys/generate-root/update', { key: keys[0], nonce: start.nonce }, { token: null });
    expect(dup.body.errors[0]).toMatch(/already been provided/);
    const bogus = Buffer.alloc(33, 7).toString('base64');
    const bad = await d.req('PUT', 'sys/generate-root/update', { key: bogus, nonce: start.nonce }, { token: null });
    expect(bad.status).toBe(400);
    const cancel = await d.cli(['operator', 'generate-root', '-cancel'], { token: null });
    expect(cancel.exitCode).toBe(0);
    expect((await d.req('GET', 'sys/generate-root/attempt', undefined, { token: null })).body.started).toBe(false);
  });

  it('-generate-otp prints a 28-character base62 OTP', async () => {
    const r = await d.cli(['operator', 'generate-root', '-generate-otp'], { token: null });
    expect(r.stdout.trim()).toMatch(/^[0-9A-Za-z]{28}$/);
  });
});

describe.skipIf(!HAS_GPG)('PGP-encrypted shares and tokens, opened with gpg', () => {
  let gnupg: string;
  const gpg = (args: string[], input?: string | Buffer) =>
    execa(
      'gpg',
      [
        '--batch',
        '--no-tty',
        '--quiet',
        '--homedir',
        gnupg,
        '--pinentry-mode',
        'loopback',
        '--passphrase',
        '',
        ...args,
      ],
      { input, encoding: 'buffer' },
    );
  const pubs: string[] = [];
  const fprs: string[] = [];
  beforeAll(async () => {
    gnupg = mkdtempSync(join(tmpdir(), 'keyhold-gpg-test-'));
    for (const who of ['alice', 'bob']) {
      // gpg 2.2 under parallel load now and then writes a subkey binding signature without its
      // second MPI (gpg --list-packets: `data: [MPI_NULL]`; about 1 key in 15 with six gpg at once),
      // a broken key OpenPGP.js rightly refuses ("Unexpected end of packet"). Such a key is made
      // again, under a new user id, until an independent parser (OpenPGP.js) reads it whole.
      let pub = '';
      let email = '';
      for (let attempt = 1; attempt <= 5 && !pub; attempt++) {
        email = `${who}${attempt}@keyhold.test`;
        await gpg(['--quick-gen-key', `${who} <${email}>`, 'future-default', 'default', 'never']);
        const exp = Buffer.from((await gpg(['--export', email])).stdout as unknown as Uint8Array);
        try {
          await readKey({ binaryKey: exp });
          pub = exp.toString('base64');
        } catch (e) {
          if (attempt === 5) throw new Error(`gpg made 5 unreadable keys for ${who}: ${(e as Error).message}`);
        }
      }
      pubs.push(pub);
      const list = Buffer.from(
        (await gpg(['--with-colons', '--fingerprint', email])).stdout as unknown as Uint8Array,
      ).toString();
      fprs.push(/^fpr:(?:[^:]*:){8}([0-9A-F]+):/m.exec(list)![1]!.toLowerCase());
    }
  }, 60_000);
  afterAll(async () => {
    await execa('gpgconf', ['--homedir', gnupg, '--kill', 'all'], { reject: false });
    cleanup(gnupg);
  });
  const decrypt = async (b64: string) =>
    Buffer.from((await gpg(['--decrypt'], Buffer.from(b64, 'base64'))).stdout as unknown as Uint8Array).toString(
      'utf8',
    );

  it('vault operator init -pgp-keys=FILES -root-token-pgp-key=FILE (the vault CLI form): gpg opens what it prints', {
    timeout: 60_000,
  }, async () => {
    const d = await startDaemon({ dev: false, tcp: true, args: ['--keychain', 'none'] });
    const bin = vaultBinDir();
    try {
      // One key file as the binary key (gpg --export), one as its base64: the vault CLI takes both.
      const alice = join(bin, 'alice.gpg');
      const bob = join(bin, 'bob.b64');
      writeFileSync(alice, Buffer.from(pubs[0]!, 'base64'));
      writeFileSync(bob, `${pubs[1]}\n`);
      const env = { VAULT_ADDR: d.tcp!, HOME: bin };
      const r = await runScript(
        bin,
        `vault operator init -key-shares=2 -key-threshold=2 -pgp-keys=${alice},${bob} -root-token-pgp-key=${alice}`,
        env,
      );
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const printed = [...r.stdout.matchAll(/^Unseal Key (\d): (\S+)$/gm)].map((m) => m[2]!);
      expect(printed).toHaveLength(2);
      const shares = [await decrypt(printed[0]!), await decrypt(printed[1]!)];
      for (const sh of shares) expect(sh).toMatch(/^[0-9a-f]{66}$/);
      const token = await decrypt(/^Initial Root Token: (\S+)$/m.exec(r.stdout)![1]!);
      expect(token).toMatch(/^hvs\./);
      // The decrypted shares unseal it after a seal, through the vault face.
      const u = await runScript(
        bin,
        `vault operator seal && vault operator unseal ${shares[0]} > /dev/null && vault operator unseal -format=json ${shares[1]} | jq -r .sealed`,
        { ...env, VAULT_TOKEN: token },
      );
      expect(u.exitCode, u.stderr).toBe(0);
      expect(u.stdout.trim().split('\n').at(-1)).toBe('false');
      // An ASCII-armored key is refused before anything is sent, naming the flag.
      writeFileSync(
        join(bin, 'armored.asc'),
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n',
      );
      const bad = await runScript(bin, `vault operator init -pgp-keys=${join(bin, 'armored.asc')}`, env);
      expect(bad.exitCode).toBe(1);
      expect(bad.stderr).toMatch(/-pgp-keys: .*armored\.asc is ASCII-armored/);
    } finally {
      await d.stop();
      cleanup(d.dir);
      cleanup(bin);
    }
  });

  it('init with pgp_keys and root_token_pgp_key: gpg opens each share (hex) and the token; the shares unseal', {
    timeout: 60_000,
  }, async () => {
    const { d, init } = await initDaemon(2, 2, { pgp_keys: pubs, root_token_pgp_key: pubs[0] });
    try {
      expect(init.status, JSON.stringify(init.body)).toBe(200);
      expect(init.body.keys_base64).toHaveLength(2);
      const shares = [await decrypt(init.body.keys_base64[0]), await decrypt(init.body.keys_base64[1])];
      for (const s of shares) expect(s).toMatch(/^[0-9a-f]{66}$/);
      // keys (hex) and keys_base64 are the same ciphertext.
      expect(Buffer.from(init.body.keys[1], 'hex').toString('base64')).toBe(init.body.keys_base64[1]);
      const token = await decrypt(init.body.root_token);
      expect(token).toMatch(/^hvs\./);
      expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token })).status).toBe(200);
      await d.req('POST', 'sys/seal', {}, { token });
      await d.req('POST', 'sys/unseal', { key: shares[0] }, { token: null });
      const un = await d.req('POST', 'sys/unseal', { key: shares[1] }, { token: null });
      expect(un.body.sealed).toBe(false);

      // generate-root with pgp_key: the token comes back encrypted to bob.
      const start = await d.req('PUT', 'sys/generate-root/attempt', { pgp_key: pubs[1] }, { token: null });
      expect(start.body.pgp_fingerprint).toBe(fprs[1]);
      await d.req('PUT', 'sys/generate-root/update', { key: shares[0], nonce: start.body.nonce }, { token: null });
      const done = await d.req(
        'PUT',
        'sys/generate-root/update',
        { key: shares[1], nonce: start.body.nonce },
        { token: null },
      );
      expect(done.body.complete).toBe(true);
      const newRoot = await decrypt(done.body.encoded_token);
      expect((await d.req('GET', 'auth/token/lookup-self', undefined, { token: newRoot })).body.data.policies).toEqual([
        'root',
      ]);

      // rekey with pgp_keys and backup: new shares encrypted, kept for sys/rekey/backup.
      const rk = await d.req(
        'PUT',
        'sys/rekey/init',
        { secret_shares: 2, secret_threshold: 2, pgp_keys: [pubs[1], pubs[0]], backup: true },
        { token: null },
      );
      expect(rk.body.pgp_fingerprints, JSON.stringify(rk.body)).toEqual([fprs[1], fprs[0]]);
      const r1 = await d.req('PUT', 'sys/rekey/update', { key: shares[0], nonce: rk.body.nonce }, { token: null });
      const r2 = await d.req('PUT', 'sys/rekey/update', { key: shares[1], nonce: rk.body.nonce }, { token: null });
      expect(r1.body.complete).toBeUndefined();
      expect(r2.body).toMatchObject({ complete: true, backup: true, pgp_fingerprints: [fprs[1], fprs[0]] });
      const backup = await d.req('GET', 'sys/rekey/backup', undefined, { token: newRoot });
      expect(backup.body.data.nonce).toBe(rk.body.nonce);
      expect(backup.body.data.keys[fprs[1]]).toEqual([r2.body.keys[0]]);
      const newShares = [await decrypt(r2.body.keys_base64[0]), await decrypt(r2.body.keys_base64[1])];
      await d.req('POST', 'sys/seal', {}, { token: newRoot });
      await d.req('POST', 'sys/unseal', { key: newShares[0] }, { token: null });
      expect((await d.req('POST', 'sys/unseal', { key: newShares[1] }, { token: null })).body.sealed).toBe(false);
      expect((await d.req('DELETE', 'sys/rekey/backup', undefined, { token: newRoot })).status).toBe(204);
      expect((await d.req('GET', 'sys/rekey/backup', undefined, { token: newRoot })).status).toBe(400);
    } finally {
      await d.stop();
      cleanup(d.dir);
    }
  });

  it('refuses a bad PGP key before anything is written, naming the field', async () => {
    const d = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    try {
      const bad = await d.req(
        'POST',
        'sys/init',
        { secret_shares: 2, secret_threshold: 2, pgp_keys: [pubs[0], 'bm90IGEga2V5IGF0IGFsbA=='] },
        { token: null },
      );
      expect(bad.status).toBe(400);
      expect(bad.body.errors[0]).toMatch(/^pgp_keys\[1\]: /);
      const count = await d.req(
        'POST',
        'sys/init',
        { secret_shares: 3, secret_threshold: 2, pgp_keys: pubs },
        { token: null },
      );
      expect(count.body.errors[0]).toMatch(/^pgp_keys: 2 PGP keys given for 3 shares/);
      expect((await d.req('GET', 'sys/init', undefined, { token: null })).body.initialized).toBe(false);
    } finally {
      await d.stop();
      cleanup(d.dir);
    }
  });
});

describe('generate-root with recovery keys on an auto-unseal node (seal "transit")', () => {
  it('recovery shares make a root token; unseal-key-shaped parts that are not the recovery key do not', {
    timeout: 60_000,
  }, async () => {
    const unsealer = await startDaemon({ dev: false, args: ['--keychain', 'none'] });
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-ops-gr-auto-'));
    let node: Daemon | undefined;
    try {
      const ui = (await unsealer.req('PUT', 'sys/init', { keychain: false }, { token: null })).body;
      await unsealer.req('POST', 'sys/mounts/transit', { type: 'transit' }, { token: ui.root_token });
      await unsealer.req('POST', 'transit/keys/autounseal', {}, { token: ui.root_token });
      const cfg = join(dir, 'seal.hcl');
      writeFileSync(
        cfg,
        `seal "transit" {\n  address = "unix://${unsealer.socket}"\n  token = "${ui.root_token}"\n  key_name = "autounseal"\n  mount_path = "transit/"\n}\n`,
      );
      node = await startDaemon({ dev: false, args: ['--keychain', 'none', '--config', cfg] });
      const init = (await node.req('PUT', 'sys/init', { recovery_shares: 3, recovery_threshold: 2 }, { token: null }))
        .body;
      expect(init.recovery_keys_base64).toHaveLength(3);
      const status = (await node.req('GET', 'sys/generate-root/attempt', undefined, { token: null })).body;
      expect(status.required).toBe(2);
      const otp = 'BMjzW3wAsEzINXCM05Wbas3u9zSl';
      let start = (await node.req('PUT', 'sys/generate-root/attempt', { otp }, { token: null })).body;
      await node.req(
        'PUT',
        'sys/generate-root/update',
        { key: Buffer.alloc(33, 1).toString('base64'), nonce: start.nonce },
        { token: null },
      );
      const wrong = await node.req(
        'PUT',
        'sys/generate-root/update',
        { key: Buffer.alloc(33, 2).toString('base64'), nonce: start.nonce },
        { token: null },
      );
      expect(wrong.status).toBe(400);
      await node.req('DELETE', 'sys/generate-root/attempt', undefined, { token: null });
      start = (await node.req('PUT', 'sys/generate-root/attempt', { otp }, { token: null })).body;
      await node.req(
        'PUT',
        'sys/generate-root/update',
        { key: init.recovery_keys_base64[1], nonce: start.nonce },
        { token: null },
      );
      const done = (
        await node.req(
          'PUT',
          'sys/generate-root/update',
          { key: init.recovery_keys_base64[2], nonce: start.nonce },
          { token: null },
        )
      ).body;
      expect(done.complete).toBe(true);
      const dec = await node.cli(['operator', 'generate-root', `-decode=${done.encoded_token}`, `-otp=${otp}`], {
        token: null,
      });
      const token = dec.stdout.trim();
      expect((await node.req('GET', 'auth/token/lookup-self', undefined, { token })).body.data.policies).toEqual([
        'root',
      ]);
    } finally {
      await node?.stop();
      if (node) cleanup(node.dir);
      await unsealer.stop();
      cleanup(unsealer.dir);
      cleanup(dir);
    }
  });
});
