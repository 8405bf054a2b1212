/**
 * Vault-faithful Shamir init, unseal and rekey against the real daemon (no keychain: the shares are
 * the only way in). Shares are checked with an independent Shamir implementation (a GF(256)
 * Lagrange interpolation written here from the textbook, with Vault's share layout: y bytes then x).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
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
async function start(dir?: string): Promise<Daemon> {
  const d0 = dir ?? mkdtempSync(join(tmpdir(), 'keyhold-shamir-'));
  if (!dir) dirs.push(d0);
  const d = await startDaemon({ dev: false, dir: d0, args: ['--keychain', 'none'] });
  daemons.push(d);
  return d;
}
async function stop(d: Daemon): Promise<void> {
  expect(await d.stop()).toBe(0);
  daemons.splice(daemons.indexOf(d), 1);
}

// GF(2^8) with the AES polynomial x^8+x^4+x^3+x+1 (0x11b), the field Vault's shamir package uses.
function gmul(a: number, b: number): number {
  let p = 0;
  for (let i = 0; i < 8; i++) {
    if (b & 1) p ^= a;
    const hi = a & 0x80;
    a = (a << 1) & 0xff;
    if (hi) a ^= 0x1b;
    b >>= 1;
  }
  return p;
}
function ginv(a: number): number {
  // a^254 = a^-1 in GF(256)
  let r = 1;
  for (let i = 0; i < 254; i++) r = gmul(r, a);
  return r;
}
/** Independent reconstruction: Lagrange interpolation at x=0 over the given shares. */
function reconstruct(shares: Buffer[]): Buffer {
  const len = shares[0]!.length - 1;
  const xs = shares.map((s) => s[len]!);
  const out = Buffer.alloc(len);
  for (let i = 0; i < len; i++) {
    let acc = 0;
    for (let j = 0; j < shares.length; j++) {
      let num = 1;
      let den = 1;
      for (let m = 0; m < shares.length; m++) {
        if (m === j) continue;
        num = gmul(num, xs[m]!);
        den = gmul(den, xs[m]! ^ xs[j]!);
      }
      acc ^= gmul(shares[j]![i]!, gmul(num, ginv(den)));
    }
    out[i] = acc;
  }
  return out;
}

describe('sys/init with secret_shares and sys/unseal with shares (Vault-faithful)', () => {
  it('5 shares / threshold 3: hex and base64 keys, progress and nonce, reset, any 3 shares unseal, 2 do not', async () => {
    let d = await start();
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      initialized: false,
      t: 0,
      n: 0,
      recovery_seal: false,
    });
    // Vault's validation messages.
    for (const [body, msg] of [
      [
        { secret_shares: 3, secret_threshold: 1 },
        'invalid seal configuration: threshold must be greater than one for multiple shares',
      ],
      [{ secret_shares: 2, secret_threshold: 3 }, 'invalid seal configuration: threshold cannot be larger than shares'],
      [{ secret_shares: 0, secret_threshold: 0 }, 'invalid seal configuration: shares must be at least one'],
      [{ secret_shares: 256, secret_threshold: 2 }, 'invalid seal configuration: shares must be less than 256'],
      [
        { recovery_shares: 3, recovery_threshold: 2 },
        'parameters recovery_shares,recovery_threshold not applicable to seal type shamir',
      ],
    ] as const) {
      const r = await d.req('PUT', 'sys/init', body, { token: null });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([msg]);
    }
    expect((await d.req('GET', 'sys/init', undefined, { token: null })).body).toEqual({ initialized: false });

    const init = await d.req(
      'PUT',
      'sys/init',
      { secret_shares: 5, secret_threshold: 3, keychain: false },
      { token: null },
    );
    expect(init.status).toBe(200);
    const { keys, keys_base64: b64, root_token: root } = init.body;
    expect(Object.keys(init.body).sort()).toEqual(['keychain', 'keys', 'keys_base64', 'root_token']);
    expect(keys).toHaveLength(5);
    for (let i = 0; i < 5; i++) {
      expect(keys[i]).toMatch(/^[0-9a-f]{66}$/); // 32-byte key + 1 byte x coordinate
      expect(Buffer.from(keys[i], 'hex').equals(Buffer.from(b64[i], 'base64'))).toBe(true);
    }
    // Any 3 shares rebuild the same 32-byte key with an independent interpolation; distinct x coordinates.
    const shares = keys.map((k: string) => Buffer.from(k, 'hex'));
    expect(new Set(shares.map((s: Buffer) => s[32])).size).toBe(5);
    const m1 = reconstruct([shares[0], shares[1], shares[2]]);
    expect(reconstruct([shares[4], shares[2], shares[3]]).equals(m1)).toBe(true);
    expect(reconstruct([shares[0], shares[1]]).equals(m1)).toBe(false);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      type: 'shamir',
      initialized: true,
      sealed: false,
      t: 3,
      n: 5,
    });
    await stop(d);

    d = await start(d.dir);
    const sealedSt = (await d.req('GET', 'sys/seal-status', undefined, { token: null })).body;
    expect(sealedSt).toMatchObject({ sealed: true, t: 3, n: 5, progress: 0, nonce: '' });
    expect(sealedSt.cluster_id).toBeUndefined();
    // One share (hex), then the same share again (not counted), then a base64 one.
    const s1 = (await d.req('PUT', 'sys/unseal', { key: keys[1] }, { token: null })).body;
    expect(s1).toMatchObject({ sealed: true, t: 3, n: 5, progress: 1 });
    expect(s1.nonce).toMatch(/^[0-9a-f-]{36}$/);
    expect((await d.req('PUT', 'sys/unseal', { key: b64[1] }, { token: null })).body).toMatchObject({
      progress: 1,
      nonce: s1.nonce,
    });
    expect((await d.req('PUT', 'sys/unseal', { key: b64[3] }, { token: null })).body).toMatchObject({
      progress: 2,
      nonce: s1.nonce,
    });
    // reset forgets them
    expect((await d.req('PUT', 'sys/unseal', { reset: true }, { token: null })).body).toMatchObject({
      sealed: true,
      progress: 0,
      nonce: '',
    });
    // bad input: Vault's messages, 400, never a 500
    expect((await d.req('PUT', 'sys/unseal', {}, { token: null })).body.errors).toEqual([
      "'key' must be specified in request body as JSON, or 'reset' set to true",
    ]);
    expect((await d.req('PUT', 'sys/unseal', { key: 'not a key!' }, { token: null })).body.errors).toEqual([
      "'key' must be a valid hex or base64 string",
    ]);
    expect((await d.req('PUT', 'sys/unseal', { key: 'AAAA' }, { token: null })).body.errors).toEqual([
      'key is shorter than minimum 16 bytes',
    ]);
    expect(
      (await d.req('PUT', 'sys/unseal', { key: Buffer.alloc(40).toString('base64') }, { token: null })).body.errors,
    ).toEqual(['key is longer than maximum 33 bytes']);
    expect((await d.req('PUT', 'sys/unseal', { key: b64[0], migrate: true }, { token: null })).body.errors).toEqual([
      "can't perform a seal migration, no migration seal found",
    ]);
    // Three shares of which one is forged: the combined key is wrong, 400, and progress starts over.
    const forged = Buffer.from(shares[2]);
    forged[0] ^= 1;
    await d.req('PUT', 'sys/unseal', { key: keys[0] }, { token: null });
    await d.req('PUT', 'sys/unseal', { key: keys[1] }, { token: null });
    const bad = await d.req('PUT', 'sys/unseal', { key: forged.toString('hex') }, { token: null });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/invalid key/);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      sealed: true,
      progress: 0,
    });
    // Three good shares in another order unseal.
    for (const k of [b64[4], keys[0]])
      expect((await d.req('PUT', 'sys/unseal', { key: k }, { token: null })).body.sealed).toBe(true);
    const done = (await d.req('PUT', 'sys/unseal', { key: b64[2] }, { token: null })).body;
    expect(done).toMatchObject({ sealed: false, progress: 0, nonce: '', t: 3, n: 5 });
    expect(done.cluster_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: root })).status).toBe(200);
    // Unsealed: a further key is a no-op (Vault), reset is refused.
    expect((await d.req('PUT', 'sys/unseal', { key: b64[0] }, { token: null })).body.sealed).toBe(false);
    expect((await d.req('PUT', 'sys/unseal', { reset: true }, { token: null })).body.errors).toEqual([
      'vault is unsealed',
    ]);
    // No share ever reaches the daemon's output.
    for (const k of [...keys, ...b64]) expect(d.output()).not.toContain(k);
    await stop(d);
  });

  it('CLI: operator init -key-shares=5 -key-threshold=3, operator unseal with one share per call and several on stdin', async () => {
    let d = await start();
    const init = await d.cli(
      ['operator', 'init', '-key-shares=5', '-key-threshold=3', '--no-keychain', '--format', 'json'],
      { token: null },
    );
    expect(init.exitCode, init.stderr).toBe(0);
    const out = JSON.parse(init.stdout);
    expect(out).toMatchObject({ unseal_shares: 5, unseal_threshold: 3, recovery_keys_b64: [], keychain: false });
    expect(out.unseal_keys_b64).toHaveLength(5);
    expect(out.unseal_keys_hex).toHaveLength(5);
    expect(out.recovery_key).toBeUndefined();
    expect((await d.cli(['operator', 'init', '--status'], { token: null })).stdout).toBe('keyhold is initialized');
    await stop(d);

    d = await start(d.dir);
    expect((await d.cli(['operator', 'init', '--status'], { token: null })).exitCode).toBe(0);
    // A key on the command line is refused (ps, shell history); @file and stdin work.
    const literal = await d.cli(['operator', 'unseal', out.unseal_keys_b64[0]], { token: null });
    expect(literal.exitCode).toBe(1);
    expect(literal.stderr).toMatch(/not on the command line/);
    writeFileSync(join(d.dir, 'share.txt'), out.unseal_keys_b64[0] + '\n', { mode: 0o600 });
    const one = await d.cli(['operator', 'unseal', `@${join(d.dir, 'share.txt')}`, '--format', 'json'], {
      token: null,
    });
    expect(one.exitCode, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ sealed: true, progress: 1 });
    // The rest on stdin, one per line (hex works too); stops once unsealed.
    const rest = await d.cli(['operator', 'unseal', '--format', 'json'], {
      input: `${out.unseal_keys_hex[3]}\n\n${out.unseal_keys_b64[4]}\n${out.unseal_keys_b64[2]}\n`,
      token: null,
    });
    expect(rest.exitCode, rest.stderr).toBe(0);
    expect(JSON.parse(rest.stdout)).toMatchObject({ sealed: false, t: 3, n: 5 });
    expect((await d.cli(['status'])).exitCode).toBe(0);

    const bad = await d.cli(['operator', 'init', '--key-shares', '2', '--key-threshold', '1'], { token: null });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/Vault is already initialized/);
    await stop(d);

    // Table output prints Vault's "Unseal Key N:" lines.
    const d2 = await start();
    const t = await d2.cli(['operator', 'init', '--key-shares', '3', '--key-threshold', '2', '--no-keychain'], {
      token: null,
    });
    expect(t.exitCode, t.stderr).toBe(0);
    expect(t.stdout.match(/^Unseal Key \d: \S+$/gm)).toHaveLength(3);
    expect(t.stdout).toMatch(/Initial Root Token: hvs\./);
    expect(t.stdout).toMatch(/initialized with 3 key shares and a key threshold of 2/);
    await stop(d2);
  });
});

describe('sys/rekey (Vault-faithful)', () => {
  it('rekeys 1/1 -> 5/3 -> 3/2 with nonce and progress; old shares stop working, new ones unseal after a restart', async () => {
    let d = await start();
    const init = (await d.req('PUT', 'sys/init', { keychain: false }, { token: null })).body;
    expect(init.keys).toHaveLength(1);
    // The audit log never sees key shares: Vault serves these routes outside its audited path.
    const auditFile = join(d.dir, 'audit.log');
    expect(
      (
        await d.req(
          'PUT',
          'sys/audit/file',
          { type: 'file', options: { file_path: auditFile } },
          { token: init.root_token },
        )
      ).status,
    ).toBe(204);
    expect(init.keys[0]).toMatch(/^[0-9a-f]{64}$/);
    const oldKey = init.keys_base64[0];

    expect((await d.req('GET', 'sys/rekey/init', undefined, { token: null })).body).toEqual({
      nonce: '',
      started: false,
      t: 0,
      n: 0,
      progress: 0,
      required: 1,
      pgp_fingerprints: null,
      backup: false,
      verification_required: false,
    });
    expect(
      (await d.req('PUT', 'sys/rekey/init', { secret_shares: 2, secret_threshold: 3 }, { token: null })).body.errors,
    ).toEqual(['provided threshold greater than the total shares']);
    expect(
      (await d.req('PUT', 'sys/rekey/init', { secret_shares: 3, secret_threshold: 1 }, { token: null })).body.errors,
    ).toEqual(['invalid rekey seal configuration: threshold must be greater than one for multiple shares']);
    expect(
      (await d.req('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 3, backup: true }, { token: null }))
        .body.errors,
    ).toEqual(['cannot request a backup of the new keys without providing PGP keys for encryption']);
    expect(
      (await d.req('PUT', 'sys/rekey-recovery-key/init', { secret_shares: 5, secret_threshold: 3 }, { token: null }))
        .body.errors,
    ).toEqual(['recovery rekeying not supported']);
    const st = await d.req('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 3 }, { token: null });
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ started: true, t: 3, n: 5, progress: 0, required: 1 });
    const nonce = st.body.nonce;
    expect(
      (await d.req('PUT', 'sys/rekey/init', { secret_shares: 5, secret_threshold: 3 }, { token: null })).body.errors,
    ).toEqual(['rekey already in progress']);
    expect(
      (await d.req('PUT', 'sys/rekey/update', { key: oldKey, nonce: 'nope' }, { token: null })).body.errors,
    ).toEqual([`incorrect nonce supplied; nonce for this rekey operation is "${nonce}"`]);
    const wrong = await d.req(
      'PUT',
      'sys/rekey/update',
      { key: Buffer.alloc(32, 7).toString('base64'), nonce },
      { token: null },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0]).toMatch(/^root key verification failed/);
    const up = await d.req('PUT', 'sys/rekey/update', { key: oldKey, nonce }, { token: null });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ nonce, complete: true, verification_required: false, backup: false });
    expect(up.body.keys).toHaveLength(5);
    const five: string[] = up.body.keys_base64;
    expect((await d.req('GET', 'sys/rekey/init', undefined, { token: null })).body).toMatchObject({
      started: false,
      required: 3,
    });
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({ t: 3, n: 5 });

    // Through the CLI: 5/3 -> 3/2 with the Vault-style flags and shares on stdin.
    const ci = await d.cli(['operator', 'rekey', '-init', '-key-shares=3', '-key-threshold=2', '--format', 'json'], {
      token: null,
    });
    expect(ci.exitCode, ci.stderr).toBe(0);
    expect(JSON.parse(ci.stdout)).toMatchObject({ started: true, n: 3, t: 2, required: 3 });
    const cu = await d.cli(['operator', 'rekey'], { input: `${five[0]}\n${five[2]}\n${five[4]}\n`, token: null });
    expect(cu.exitCode, cu.stderr).toBe(0);
    const three = [...cu.stdout.matchAll(/^Key \d: (\S+)$/gm)].map((m) => m[1]!);
    expect(three).toHaveLength(3);
    expect((await d.req('GET', 'sys/mounts', undefined, { token: init.root_token })).status).toBe(200);
    const { readFileSync } = await import('node:fs');
    const audit = readFileSync(auditFile, 'utf8');
    expect(audit).toContain('sys/mounts'); // the device works...
    expect(audit).not.toMatch(/sys\/rekey/); // ...and saw no rekey request or response
    for (const k of [oldKey, init.keys[0], ...five, ...three]) expect(audit).not.toContain(k);
    expect(cu.stdout).toMatch(/Operation nonce: [0-9a-f-]{36}/);
    await stop(d);

    d = await start(d.dir);
    // The 1/1 key and the 5 interim shares no longer open the store.
    // (a part is only counted until the threshold, 2 now: an old key with a new-length share cannot combine)
    expect((await d.req('PUT', 'sys/unseal', { key: oldKey }, { token: null })).body).toMatchObject({
      sealed: true,
      progress: 1,
    });
    const mixed = await d.req('PUT', 'sys/unseal', { key: five[0] }, { token: null });
    expect(mixed.status).toBe(400);
    expect(mixed.body.errors[0]).toMatch(/^failed to compute combined key/);
    await d.req('PUT', 'sys/unseal', { key: five[1] }, { token: null });
    const old = await d.req('PUT', 'sys/unseal', { key: five[3] }, { token: null });
    expect(old.status).toBe(400);
    expect(old.body.errors[0]).toMatch(/invalid key/);
    const un = await d.cli(['operator', 'unseal', '--format', 'json'], {
      input: `${three[1]}\n${three[2]}\n`,
      token: null,
    });
    expect(un.exitCode, un.stderr).toBe(0);
    expect(JSON.parse(un.stdout)).toMatchObject({ sealed: false, t: 2, n: 3 });
    expect((await d.req('GET', 'sys/mounts', undefined, { token: init.root_token })).status).toBe(200);
    await stop(d);
  });

  it('require_verification: the new shares take effect only once given back; cancel and verify restart', async () => {
    const d = await start();
    const init = (
      await d.req('PUT', 'sys/init', { secret_shares: 3, secret_threshold: 2, keychain: false }, { token: null })
    ).body;
    const st = (
      await d.req(
        'PUT',
        'sys/rekey/init',
        { secret_shares: 2, secret_threshold: 2, require_verification: true },
        { token: null },
      )
    ).body;
    expect(st.verification_required).toBe(true);
    expect(
      (await d.req('PUT', 'sys/rekey/update', { key: init.keys[0], nonce: st.nonce }, { token: null })).body,
    ).toMatchObject({ started: true, progress: 1, required: 2 });
    expect(
      (await d.req('PUT', 'sys/rekey/update', { key: init.keys[0], nonce: st.nonce }, { token: null })).body.errors,
    ).toEqual(['given key has already been provided during this generation operation']);
    const up = (await d.req('PUT', 'sys/rekey/update', { key: init.keys[2], nonce: st.nonce }, { token: null })).body;
    expect(up).toMatchObject({ complete: true, verification_required: true });
    expect(up.verification_nonce).toMatch(/^[0-9a-f-]{36}$/);
    expect(up.keys).toHaveLength(2);
    expect(
      (await d.req('PUT', 'sys/rekey/update', { key: init.keys[1], nonce: st.nonce }, { token: null })).body.errors[0],
    ).toMatch(/^rekey operation already finished; verification must be performed/);
    // Not in effect yet: the old shares still verify a second rekey's... (checked after cancel below).
    const vst = (await d.req('GET', 'sys/rekey/verify', undefined, { token: null })).body;
    expect(vst).toEqual({ nonce: up.verification_nonce, started: true, t: 2, n: 2, progress: 0 });
    // Restart gives a new nonce.
    const restarted = (await d.req('DELETE', 'sys/rekey/verify', undefined, { token: null })).body;
    expect(restarted.nonce).not.toBe(up.verification_nonce);
    // A wrong pair fails and resets progress; the right pair completes.
    const other = Buffer.from(up.keys[0], 'hex');
    other[3] ^= 0xff;
    expect(
      (await d.req('PUT', 'sys/rekey/verify', { key: up.keys[1], nonce: restarted.nonce }, { token: null })).body,
    ).toMatchObject({ progress: 1 });
    expect(
      (await d.req('PUT', 'sys/rekey/verify', { key: other.toString('hex'), nonce: restarted.nonce }, { token: null }))
        .body.errors,
    ).toEqual(['rekey verification failed; incorrect key shares supplied']);
    const cv = await d.cli(['operator', 'rekey', '--verify'], {
      input: `${up.keys_base64[0]}\n${up.keys_base64[1]}\n`,
      token: null,
    });
    expect(cv.exitCode, cv.stderr).toBe(0);
    expect(cv.stdout).toMatch(/Rekey verified/);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({ t: 2, n: 2 });
    // Seal and unseal with the verified new shares; the old ones fail.
    expect((await d.req('PUT', 'sys/seal', {}, { token: init.root_token })).status).toBe(204);
    await d.req('PUT', 'sys/unseal', { key: init.keys[0] }, { token: null });
    expect((await d.req('PUT', 'sys/unseal', { key: init.keys[1] }, { token: null })).status).toBe(400);
    await d.req('PUT', 'sys/unseal', { key: up.keys[0] }, { token: null });
    expect((await d.req('PUT', 'sys/unseal', { key: up.keys[1] }, { token: null })).body.sealed).toBe(false);

    // Cancel: DELETE answers 204 and the status is empty again.
    expect(
      (await d.req('PUT', 'sys/rekey/init', { secret_shares: 1, secret_threshold: 1 }, { token: null })).status,
    ).toBe(200);
    expect((await d.cli(['operator', 'rekey', '--cancel'], { token: null })).exitCode).toBe(0);
    expect((await d.req('GET', 'sys/rekey/init', undefined, { token: null })).body.started).toBe(false);
    // Sealed: rekey answers 503.
    expect((await d.req('PUT', 'sys/seal', {}, { token: init.root_token })).status).toBe(204);
    expect((await d.req('GET', 'sys/rekey/init', undefined, { token: null })).status).toBe(503);
    await stop(d);
  });
});

// The keychain tests need a Secret Service; scripts/with-keyring.sh starts one and says whether it works.
const secretService = process.env.KEYHOLD_SECRET_SERVICE === '1';

describe.skipIf(!secretService)('shares with the OS keychain (real Secret Service: gnome-keyring)', () => {
  it('init 3/2 keeps the master key in the keychain; a rekey moves the keychain entry to the new key; restarts unseal by themselves', async () => {
    const { execFileSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'keyhold-shamir-kc-'));
    dirs.push(dir);
    let d = await startDaemon({ dev: false, dir });
    daemons.push(d);
    const init = (await d.req('PUT', 'sys/init', { secret_shares: 3, secret_threshold: 2 }, { token: null })).body;
    expect(init.keychain).toBe(true);
    const master = reconstruct([Buffer.from(init.keys[0], 'hex'), Buffer.from(init.keys[2], 'hex')]);
    const entries = () =>
      execFileSync('secret-tool', ['search', '--all', 'service', 'keyhold'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    expect(entries()).toContain(`secret = ${master.toString('base64')}`);

    const st = (await d.req('PUT', 'sys/rekey/init', { secret_shares: 2, secret_threshold: 2 }, { token: null })).body;
    await d.req('PUT', 'sys/rekey/update', { key: init.keys[1], nonce: st.nonce }, { token: null });
    const up = (await d.req('PUT', 'sys/rekey/update', { key: init.keys[0], nonce: st.nonce }, { token: null })).body;
    expect(up.complete).toBe(true);
    const fresh = reconstruct(up.keys.map((k: string) => Buffer.from(k, 'hex')));
    expect(fresh.equals(master)).toBe(false);
    const after = entries();
    expect(after).toContain(`secret = ${fresh.toString('base64')}`);
    expect(after).not.toContain(`secret = ${master.toString('base64')}`);
    await stop(d);

    d = await startDaemon({ dev: false, dir });
    daemons.push(d);
    expect((await d.req('GET', 'sys/seal-status', undefined, { token: null })).body).toMatchObject({
      sealed: false,
      t: 2,
      n: 2,
      keychain_unseal: true,
    });
    await stop(d);
  });
});
