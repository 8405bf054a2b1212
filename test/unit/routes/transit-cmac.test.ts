/**
 * CMAC through the real router and core: the aes128/192/256-cmac key types, `cmac/:name(/:url_mac_length)`
 * (single, batch, mac_length, key_version) and verify's `cmac` field, on Vault Enterprise's shapes.
 * MACs are checked against OpenSSL's `openssl mac CMAC` (a second implementation) using the key
 * material recovered from a plaintext backup.
 */
import { execFileSync } from 'node:child_process';
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

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);

/** The raw key of `version` from a plaintext backup (Vault's backup JSON). */
async function keyBytes(name: string, version = 1): Promise<Buffer> {
  ok(await post(`keys/${name}/config`, { exportable: true, allow_plaintext_backup: true }));
  const blob = ok(await d.req('GET', `transit/backup/${name}`)).body.data.backup as string;
  const doc = JSON.parse(Buffer.from(blob, 'base64').toString('utf8'));
  return Buffer.from(doc.policy.keys[String(version)].key, 'base64');
}

function openssl(key: Buffer, msg: Buffer): Buffer {
  const out = execFileSync(
    'openssl',
    ['mac', '-cipher', `AES-${key.length * 8}-CBC`, '-macopt', `hexkey:${key.toString('hex')}`, 'CMAC'],
    { input: msg, encoding: 'utf8' },
  );
  return Buffer.from(out.trim(), 'hex');
}

describe('CMAC key types', () => {
  for (const [type, bytes] of [
    ['aes128-cmac', 16],
    ['aes192-cmac', 24],
    ['aes256-cmac', 32],
  ] as const) {
    test(`${type}: create, read, cmac matches openssl, verify`, async () => {
      const name = `c-${type}`;
      const created = ok(await post(`keys/${name}`, { type })).body.data;
      expect(created.type).toBe(type);
      expect(created.supports_signing).toBe(false);
      expect(created.supports_encryption).toBe(false);
      expect(Object.keys(created.keys)).toEqual(['1']);
      const key = await keyBytes(name);
      expect(key.length).toBe(bytes);
      const msg = Buffer.from('the quick brown fox jumps over the lazy dog');
      const cmac = ok(await post(`cmac/${name}`, { input: b64(msg) })).body.data.cmac as string;
      expect(cmac.startsWith('vault:v1:')).toBe(true);
      expect(Buffer.from(cmac.slice(9), 'base64').toString('hex')).toBe(openssl(key, msg).toString('hex'));
      expect(ok(await post(`verify/${name}`, { input: b64(msg), cmac })).body.data.valid).toBe(true);
      expect(ok(await post(`verify/${name}`, { input: b64('other'), cmac })).body.data.valid).toBe(false);
    });
  }

  test('mac_length and url_mac_length truncate; the URL wins; verify takes the truncated value', async () => {
    ok(await post('keys/trunc', { type: 'aes256-cmac' }));
    const full = ok(await post('cmac/trunc', { input: b64('abc') })).body.data.cmac as string;
    const fullBytes = Buffer.from(full.slice(9), 'base64');
    expect(fullBytes.length).toBe(16);
    const eight = ok(await post('cmac/trunc', { input: b64('abc'), mac_length: 8 })).body.data.cmac as string;
    expect(Buffer.from(eight.slice(9), 'base64')).toEqual(fullBytes.subarray(0, 8));
    const four = ok(await post('cmac/trunc/4', { input: b64('abc'), mac_length: 8 })).body.data.cmac as string;
    expect(Buffer.from(four.slice(9), 'base64')).toEqual(fullBytes.subarray(0, 4));
    expect(ok(await post('verify/trunc', { input: b64('abc'), cmac: eight })).body.data.valid).toBe(true);
    expect(ok(await post('verify/trunc', { input: b64('abc'), cmac: eight, mac_length: 8 })).body.data.valid).toBe(
      true,
    );
    const r = await post('cmac/trunc', { input: b64('abc'), mac_length: 17 });
    expect(r.status).toBe(400);
    expect(err(r)).toMatch(/mac_length/);
    expect((await post('cmac/trunc/x', { input: b64('abc') })).status).toBe(400);
  });

  test('batch: per-item mac_length, missing input fails its item, order and reference kept', async () => {
    ok(await post('keys/batch', { type: 'aes128-cmac' }));
    const r = ok(
      await post('cmac/batch', {
        batch_input: [{ input: b64('a'), reference: 'one' }, { input: b64('a'), mac_length: 8 }, { reference: 'bad' }],
      }),
    ).body.data.batch_results;
    expect(r[0].reference).toBe('one');
    expect(Buffer.from(r[1].cmac.slice(9), 'base64')).toEqual(Buffer.from(r[0].cmac.slice(9), 'base64').subarray(0, 8));
    expect(r[2].error).toBe('missing input for CMAC');
    const v = ok(
      await post('verify/batch', {
        batch_input: [
          { input: b64('a'), cmac: r[0].cmac },
          { input: b64('b'), cmac: r[1].cmac },
        ],
      }),
    ).body.data.batch_results;
    expect(v.map((x: { valid: boolean }) => x.valid)).toEqual([true, false]);
  });

  test('rotation: versions, key_version, min_decryption_version', async () => {
    ok(await post('keys/rot', { type: 'aes128-cmac' }));
    const v1 = ok(await post('cmac/rot', { input: b64('m') })).body.data.cmac as string;
    ok(await post('keys/rot/rotate', {}));
    const v2 = ok(await post('cmac/rot', { input: b64('m') })).body.data.cmac as string;
    expect(v2.startsWith('vault:v2:')).toBe(true);
    expect(v2.slice(9)).not.toBe(v1.slice(9));
    expect(ok(await post('cmac/rot', { input: b64('m'), key_version: 1 })).body.data.cmac).toBe(v1);
    expect(ok(await post('verify/rot', { input: b64('m'), cmac: v1 })).body.data.valid).toBe(true);
    ok(await post('keys/rot/config', { min_decryption_version: 2 }));
    const old = await post('verify/rot', { input: b64('m'), cmac: v1 });
    expect(old.status).toBe(400);
    expect(err(old)).toMatch(/too old/);
  });

  test('refusals: cmac on a non-CMAC key, encrypt/sign/hmac-less operations on a CMAC key', async () => {
    ok(await post('keys/aes', { type: 'aes256-gcm96' }));
    const r = await post('cmac/aes', { input: b64('x') });
    expect(r.status).toBe(400);
    expect(err(r)).toMatch(/CMAC is not supported for key type aes256-gcm96/);
    ok(await post('keys/cm', { type: 'aes256-cmac' }));
    expect((await post('encrypt/cm', { plaintext: b64('x') })).status).toBe(400);
    expect((await post('sign/cm', { input: b64('x') })).status).toBe(400);
    expect((await post('cmac/missing', { input: b64('x') })).status).toBe(400);
    const both = await post('verify/cm', { input: b64('x'), cmac: 'vault:v1:AAAA', hmac: 'vault:v1:AAAA' });
    expect(err(both)).toMatch(/provide one of/);
  });

  test('backup and restore keep the CMAC key', async () => {
    ok(await post('keys/bk', { type: 'aes192-cmac', allow_plaintext_backup: true, exportable: true }));
    const mac = ok(await post('cmac/bk', { input: b64('keep') })).body.data.cmac;
    const blob = ok(await d.req('GET', 'transit/backup/bk')).body.data.backup;
    ok(await post('restore/bk2', { backup: blob }), 204);
    expect(ok(await d.req('GET', 'transit/keys/bk2')).body.data.type).toBe('aes192-cmac');
    expect(ok(await post('verify/bk2', { input: b64('keep'), cmac: mac })).body.data.valid).toBe(true);
  });
});
