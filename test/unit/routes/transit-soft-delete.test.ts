/**
 * OpenBao's soft deletion through the real router and core: a soft-deleted key refuses encrypt,
 * decrypt, sign, hmac, rotate, config, export and trim, but reads (soft_deleted: true), backs up and
 * restores; soft-delete-restore brings it back with its material unchanged; delete still needs
 * deletion_allowed.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
beforeAll(async () => {
  d = await startHarness();
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

const b64 = (s: string) => Buffer.from(s).toString('base64');
const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);

describe('soft delete', () => {
  test('refuses every operation but read, backup and restore; restore brings the same material back', async () => {
    ok(await post('keys/sd', { type: 'aes256-gcm96', exportable: true, allow_plaintext_backup: true }));
    const ct = ok(await post('encrypt/sd', { plaintext: b64('kept') })).body.data.ciphertext;
    const soft = ok(await post('keys/sd/soft-delete', {})).body.data;
    expect(soft.soft_deleted).toBe(true);
    expect(ok(await d.req('GET', 'transit/keys/sd')).body.data.soft_deleted).toBe(true);
    const refused: [string, unknown][] = [
      ['encrypt/sd', { plaintext: b64('x') }],
      ['decrypt/sd', { ciphertext: ct }],
      ['rewrap/sd', { ciphertext: ct }],
      ['datakey/plaintext/sd', {}],
      ['hmac/sd', { input: b64('x') }],
      ['keys/sd/rotate', {}],
      ['keys/sd/config', { min_decryption_version: 1 }],
    ];
    for (const [path, body] of refused) {
      const r = await post(path, body);
      expect(r.status, path).toBe(400);
      expect(err(r), path).toMatch(/soft-deleted/);
    }
    expect((await d.req('GET', 'transit/export/encryption-key/sd')).status).toBe(400);
    const blob = ok(await d.req('GET', 'transit/backup/sd')).body.data.backup;
    ok(await post('restore/sd-copy', { backup: blob }), 204);
    expect(ok(await d.req('GET', 'transit/keys/sd-copy')).body.data.soft_deleted).toBe(true);
    const back = ok(await post('keys/sd/soft-delete-restore', {})).body.data;
    expect(back.soft_deleted).toBe(false);
    expect(Buffer.from(ok(await post('decrypt/sd', { ciphertext: ct })).body.data.plaintext, 'base64').toString()).toBe(
      'kept',
    );
    ok(await post('keys/sd/rotate', {}));
  });

  test('signing keys: sign and verify refused while soft-deleted', async () => {
    ok(await post('keys/sig', { type: 'ed25519' }));
    const sig = ok(await post('sign/sig', { input: b64('m') })).body.data.signature;
    ok(await post('keys/sig/soft-delete', {}));
    expect((await post('sign/sig', { input: b64('m') })).status).toBe(400);
    expect((await post('verify/sig', { input: b64('m'), signature: sig })).status).toBe(400);
    ok(await post('keys/sig/soft-delete-restore', {}));
    expect(ok(await post('verify/sig', { input: b64('m'), signature: sig })).body.data.valid).toBe(true);
  });

  test('delete still needs deletion_allowed; a missing key is a 400 naming it', async () => {
    ok(await post('keys/gone', {}));
    ok(await post('keys/gone/config', { deletion_allowed: true }));
    ok(await post('keys/gone/soft-delete', {}));
    ok(await d.req('DELETE', 'transit/keys/gone'), 204);
    ok(await post('keys/kept', {}));
    ok(await post('keys/kept/soft-delete', {}));
    expect((await d.req('DELETE', 'transit/keys/kept')).status).toBe(400);
    const missing = await post('keys/nope/soft-delete', {});
    expect(missing.status).toBe(400);
    expect(err(missing)).toMatch(/nope/);
  });
});
