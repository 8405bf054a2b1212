/**
 * Transit keys across restarts and at scale, against the real daemon: keys and settings survive a
 * restart on file storage, auto-rotation catches up at start-up and rotates overdue keys promptly, and a
 * key with 10,000 versions (restored from a Vault-format backup) loads, rotates, encrypts and decrypts.
 */
import { describe, expect, test } from 'vitest';
import { createCipheriv, randomBytes } from 'node:crypto';
import { cleanup, startDaemon, type Answer, type Daemon } from '../support/daemon.js';
import { initialize, startFileDaemon, unseal } from '../support/crash-harness.js';
import { vaultBackup, type EntrySpec } from '../unit/transit-keys/vault-backup-builder.js';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `fn` until it returns true (bounded). */
async function eventually(fn: () => Promise<boolean>, tries = 100, gapMs = 100): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return true;
    await sleep(gapMs);
  }
  return false;
}

/** RFC 3339 for `secondsAgo` before now. */
const ago = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();

const latest = async (d: Daemon, name: string) =>
  ok(await d.req('GET', `transit/keys/${name}`)).body.data.latest_version as number;

describe('restart on file storage', () => {
  test('keys, versions, settings and cache-config survive; auto-rotation runs for overdue keys and catches up at start-up', async () => {
    let d = await startFileDaemon();
    const dir = d.dir;
    try {
      const { key, root } = await initialize(d);
      ok(await d.req('POST', 'sys/mounts/transit', { type: 'transit' }), 204);
      ok(await d.req('POST', 'transit/keys/sig', { type: 'ecdsa-p256', exportable: true }));
      ok(await d.req('POST', 'transit/keys/sig/rotate'));
      ok(await d.req('POST', 'transit/keys/sig/config', { min_decryption_version: 2, disallow_sha1: true }));
      ok(await d.req('POST', 'transit/keys/sym', { exportable: true }));
      ok(await d.req('POST', 'transit/cache-config', { size: 15 }));
      const symKey = ok(await d.req('GET', 'transit/export/encryption-key/sym/1')).body.data.keys['1'];
      const sigPub = ok(await d.req('GET', 'transit/keys/sig')).body.data.keys['2'].public_key;
      const ct = ok(await d.req('POST', 'transit/encrypt/sym', { plaintext: b64('kept') })).body.data.ciphertext;

      // Overdue when restored: rotated promptly by the running daemon.
      const entry = (time: string): EntrySpec => ({ key: b64(randomBytes(32)), hmac_key: b64(randomBytes(32)), time });
      ok(
        await d.req('POST', 'transit/restore/overdue', {
          backup: vaultBackup('overdue', 0, [entry(ago(7200))], { auto_rotate_period: 3600e9 }),
        }),
        204,
      );
      expect(await eventually(async () => (await latest(d, 'overdue')) === 2)).toBe(true);
      // Due a few seconds from now: the daemon stops before then, so only the start-up scan can rotate it.
      ok(
        await d.req('POST', 'transit/restore/soon', {
          backup: vaultBackup('soon', 0, [entry(ago(3600 - 4))], { auto_rotate_period: 3600e9 }),
        }),
        204,
      );
      expect(await latest(d, 'soon')).toBe(1);
      await d.stop();
      await sleep(5000);

      d = await startFileDaemon(dir);
      await unseal(d, key, root);
      expect(await eventually(async () => (await latest(d, 'soon')) === 2)).toBe(true);
      await sleep(300);
      expect(await latest(d, 'soon')).toBe(2);
      expect(await latest(d, 'overdue')).toBe(2);
      const sig = ok(await d.req('GET', 'transit/keys/sig')).body.data;
      expect([sig.latest_version, sig.min_decryption_version, sig.disallow_sha1, sig.keys['2'].public_key]).toEqual([
        2,
        2,
        true,
        sigPub,
      ]);
      expect(ok(await d.req('GET', 'transit/export/encryption-key/sym/1')).body.data.keys['1']).toBe(symKey);
      expect(
        Buffer.from(
          ok(await d.req('POST', 'transit/decrypt/sym', { ciphertext: ct })).body.data.plaintext,
          'base64',
        ).toString(),
      ).toBe('kept');
      expect(ok(await d.req('GET', 'transit/cache-config')).body.data).toEqual({ size: 15 });
      // The size is live after the restart: writing it again needs no reload warning.
      expect(ok(await d.req('POST', 'transit/cache-config', { size: 15 })).body.warnings).toBeNull();
    } finally {
      await d.stop();
      cleanup(dir);
    }
  }, 90_000);
});

describe('a key with 10,000 versions', () => {
  test('restored from a Vault backup and rotated over HTTP, it reloads from storage, rotates, encrypts and decrypts old versions', async () => {
    const d = await startDaemon({ dev: true });
    try {
      const N = 10_000;
      // The backup carries the first 6,000 versions (Vault's 1 MiB JSON string limit caps one request);
      // archive-only entries keep it small, which keyhold's restore accepts like Vault's archive.
      const RESTORED = 6_000;
      const keys: Buffer[] = [];
      const archive: string[] = ['{"key":null,"hmac_key":null}'];
      for (let n = 1; n <= RESTORED; n++) {
        const k = randomBytes(32);
        keys.push(k);
        archive.push(`{"key":"${b64(k)}","hmac_key":"${b64(randomBytes(32))}"}`);
      }
      const doc = `{"policy":{"name":"big","keys":{},"type":0,"latest_version":${RESTORED},"min_decryption_version":${RESTORED},"exportable":true,"archive_min_version":0},"archived_keys":{"keys":[${archive.join(',')}]}}\n`;
      const backup = b64(doc);
      const t0 = performance.now();
      ok(await d.req('POST', 'transit/restore', { backup }), 204);
      const restoreMs = performance.now() - t0;
      // The remaining 4,000 versions by rotation (8 in flight; the per-key lock orders them). Raising
      // min_decryption_version now and then keeps each rotate answer (which lists live versions) small.
      const t1 = performance.now();
      for (let done = RESTORED; done < N; ) {
        const batch = Math.min(500, N - done);
        for (let i = 0; i < batch; i += 8) {
          await Promise.all(
            Array.from({ length: Math.min(8, batch - i) }, () =>
              d.req('POST', 'transit/keys/big/rotate').then((r) => ok(r)),
            ),
          );
        }
        done += batch;
        ok(await d.req('POST', 'transit/keys/big/config', { min_decryption_version: done }));
      }
      const rotateAllMs = performance.now() - t1;
      ok(await d.req('POST', 'transit/keys/big/config', { min_decryption_version: 1 }));
      // Reload the mount: the key is loaded again from its 10,000 version records.
      ok(await d.req('POST', 'sys/plugins/reload/backend', { plugin: 'transit' }));
      const t2 = performance.now();
      const k = ok(await d.req('GET', 'transit/keys/big')).body.data;
      const loadMs = performance.now() - t2;
      expect(k.latest_version).toBe(N);
      expect(Object.keys(k.keys)).toHaveLength(N);
      const t3 = performance.now();
      expect(ok(await d.req('POST', 'transit/keys/big/rotate')).body.data.latest_version).toBe(N + 1);
      const rotateMs = performance.now() - t3;
      const ct = ok(await d.req('POST', 'transit/encrypt/big', { plaintext: b64('ten thousand and one') })).body.data
        .ciphertext as string;
      expect(ct.startsWith(`vault:v${N + 1}:`)).toBe(true);
      expect(
        Buffer.from(
          ok(await d.req('POST', 'transit/decrypt/big', { ciphertext: ct })).body.data.plaintext,
          'base64',
        ).toString(),
      ).toBe('ten thousand and one');
      // A ciphertext made in the test under version 5,000's key (reference 4.2 layout) decrypts.
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', keys[4999]!, iv);
      const body = Buffer.concat([c.update('old data'), c.final()]);
      const old = `vault:v5000:${b64(Buffer.concat([iv, body, c.getAuthTag()]))}`;
      expect(
        Buffer.from(
          ok(await d.req('POST', 'transit/decrypt/big', { ciphertext: old })).body.data.plaintext,
          'base64',
        ).toString(),
      ).toBe('old data');
      console.log(
        `10,000-version key over HTTP: restore of 6,000 versions ${restoreMs.toFixed(0)} ms (${(backup.length / 1e6).toFixed(2)} MB), 4,000 rotations ${rotateAllMs.toFixed(0)} ms, ` +
          `first read after reload ${loadMs.toFixed(0)} ms, rotate at 10,000 ${rotateMs.toFixed(0)} ms`,
      );
    } finally {
      await d.stop();
      cleanup(d.dir);
    }
  }, 120_000);
});
