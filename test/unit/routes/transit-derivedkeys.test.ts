/**
 * `derivedkeys/:type/:name` through the real router: keys for an index range, derived from the HMAC key
 * of a version with HKDF-SHA-256 as docs/transit.md states, re-derived here with node:crypto from the
 * HMAC key exported over the API; the ciphertexts decrypt to the same keys; the same request gives the
 * same keys; indexes, salt, info and versions change them; bad input is a 400 naming the field.
 */
import { hkdfSync } from 'node:crypto';
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

const err = (r: Answer) => (r.body?.errors ?? []).join('; ');
function ok(r: Answer, status = 200): Answer {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}
const post = (path: string, body: unknown) => d.req('POST', `transit/${path}`, body);

function expected(hmacKey: Buffer, salt: string, info: string, i: number, bytes: number): string {
  const idx = Buffer.alloc(8);
  idx.writeBigUInt64BE(BigInt(i));
  return Buffer.from(
    hkdfSync('sha256', hmacKey, Buffer.from(salt), Buffer.concat([Buffer.from(info), idx]), bytes),
  ).toString('base64');
}

describe('derivedkeys', () => {
  test('plaintext: keys match an independent HKDF over the exported HMAC key and decrypt from their ciphertexts', async () => {
    ok(await post('keys/dk', { type: 'aes256-gcm96', exportable: true }));
    const hmacKey = Buffer.from(ok(await d.req('GET', 'transit/export/hmac-key/dk/1')).body.data.keys['1'], 'base64');
    const r = ok(
      await post('derivedkeys/plaintext/dk', {
        salt: 'sodium chloride',
        key_index_from: 3,
        key_index_to: 6,
        info: 'app',
        bits: 128,
      }),
    ).body.data;
    expect(Object.keys(r).sort()).toEqual(['3', '4', '5', 'key_version']);
    expect(r.key_version).toBe(1);
    for (const i of [3, 4, 5]) {
      expect(r[String(i)].plaintext).toBe(expected(hmacKey, 'sodium chloride', 'app', i, 16));
      const pt = ok(await post('decrypt/dk', { ciphertext: r[String(i)].ciphertext })).body.data.plaintext;
      expect(pt).toBe(r[String(i)].plaintext);
    }
    const again = ok(
      await post('derivedkeys/plaintext/dk', {
        salt: 'sodium chloride',
        key_index_from: 4,
        key_index_to: 5,
        info: 'app',
        bits: 128,
      }),
    ).body.data;
    expect(again['4'].plaintext).toBe(r['4'].plaintext);
    const otherSalt = ok(
      await post('derivedkeys/plaintext/dk', {
        salt: 'pepper',
        key_index_from: 4,
        key_index_to: 5,
        info: 'app',
        bits: 128,
      }),
    ).body.data;
    expect(otherSalt['4'].plaintext).not.toBe(r['4'].plaintext);
  });

  test('wrapped: ciphertexts only; key_version picks the HMAC key and the wrapping version', async () => {
    ok(await post('keys/dk2', { type: 'chacha20-poly1305', exportable: true }));
    ok(await post('keys/dk2/rotate', {}));
    const w = ok(await post('derivedkeys/wrapped/dk2', { salt: 's', key_index_from: 0, key_index_to: 2 })).body.data;
    expect(w['0'].plaintext).toBeUndefined();
    expect(w['0'].ciphertext).toMatch(/^vault:v2:/);
    expect(w.key_version).toBe(2);
    const v1 = ok(
      await post('derivedkeys/plaintext/dk2', { salt: 's', key_index_from: 0, key_index_to: 1, key_version: 1 }),
    ).body.data;
    expect(v1['0'].ciphertext).toMatch(/^vault:v1:/);
    const h1 = Buffer.from(ok(await d.req('GET', 'transit/export/hmac-key/dk2/1')).body.data.keys['1'], 'base64');
    expect(v1['0'].plaintext).toBe(expected(h1, 's', '', 0, 32));
    const dec = ok(await post('decrypt/dk2', { ciphertext: w['1'].ciphertext })).body.data.plaintext;
    const h2 = Buffer.from(ok(await d.req('GET', 'transit/export/hmac-key/dk2/2')).body.data.keys['2'], 'base64');
    expect(dec).toBe(expected(h2, 's', '', 1, 32));
  });

  test('bad input: 400 naming the field', async () => {
    ok(await post('keys/dk3', { type: 'aes256-gcm96' }));
    ok(await post('keys/dk3-ed', { type: 'ed25519' }));
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['derivedkeys/plaintext/dk3', { key_index_from: 0, key_index_to: 1 }, /salt/],
      ['derivedkeys/plaintext/dk3', { salt: 's', key_index_from: 2, key_index_to: 2 }, /key_index_to/],
      ['derivedkeys/plaintext/dk3', { salt: 's', key_index_from: -1, key_index_to: 2 }, /key_index_from/],
      ['derivedkeys/plaintext/dk3', { salt: 's', key_index_from: 0, key_index_to: 5000 }, /key_index_to.*at most/],
      ['derivedkeys/plaintext/dk3', { salt: 's', key_index_from: 0, key_index_to: 1, bits: 100 }, /bits/],
      ['derivedkeys/plaintext/dk3', { salt: 's', key_index_from: 0, key_index_to: 1, key_version: 9 }, /version/],
      ['derivedkeys/other/dk3', { salt: 's', key_index_from: 0, key_index_to: 1 }, /plaintext.*wrapped/],
      ['derivedkeys/plaintext/dk3-ed', { salt: 's', key_index_from: 0, key_index_to: 1 }, /encryption/],
      ['derivedkeys/plaintext/missing', { salt: 's', key_index_from: 0, key_index_to: 1 }, /not found/],
    ];
    for (const [path, body, re] of cases) {
      const r = await post(path, body);
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
      expect(err(r)).toMatch(re);
    }
  });
});
