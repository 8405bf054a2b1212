/**
 * OpenBao's ECDH `derive-key/:name` through the real router: keyhold's ECDSA key and a peer's key pair
 * (node:crypto, outside keyhold) agree on a key; data encrypted by keyhold decrypts at the peer with
 * node:crypto and the other way round, for every curve and derived type. Bad input is a 400 naming
 * the field.
 */
import {
  createCipheriv,
  createDecipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
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

/** Vault's AEAD ciphertext body: nonce || ciphertext || tag. */
function peerSeal(type: string, key: Buffer, pt: Buffer): Buffer {
  if (type === 'xchacha20-poly1305') {
    const nonce = randomBytes(24);
    return Buffer.concat([nonce, xchacha20poly1305(key, nonce).encrypt(pt)]);
  }
  const alg = type === 'chacha20-poly1305' ? 'chacha20-poly1305' : `aes-${key.length * 8}-gcm`;
  const nonce = randomBytes(12);
  const c = createCipheriv(alg as 'aes-256-gcm', key, nonce, { authTagLength: 16 } as never);
  return Buffer.concat([nonce, c.update(pt), c.final(), c.getAuthTag()]);
}
function peerOpen(type: string, key: Buffer, body: Buffer): Buffer {
  if (type === 'xchacha20-poly1305')
    return Buffer.from(xchacha20poly1305(key, body.subarray(0, 24)).decrypt(body.subarray(24)));
  const alg = type === 'chacha20-poly1305' ? 'chacha20-poly1305' : `aes-${key.length * 8}-gcm`;
  const dc = createDecipheriv(alg as 'aes-256-gcm', key, body.subarray(0, 12), { authTagLength: 16 } as never);
  dc.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([dc.update(body.subarray(12, body.length - 16)), dc.final()]);
}

describe('derive-key (ECDH)', () => {
  const cases = [
    ['ecdsa-p256', 'P-256', 'aes256-gcm96', 32],
    ['ecdsa-p256', 'P-256', 'aes128-gcm96', 16],
    ['ecdsa-p384', 'P-384', 'chacha20-poly1305', 32],
    ['ecdsa-p521', 'P-521', 'xchacha20-poly1305', 32],
  ] as const;
  for (const [baseType, curve, derivedType, size] of cases) {
    test(`${baseType} -> ${derivedType}: keyhold and the peer encrypt and decrypt each other's data`, async () => {
      const base = `ec-${baseType}-${derivedType}`;
      ok(await post(`keys/${base}`, { type: baseType }));
      const ours = createPublicKey(ok(await d.req('GET', `transit/keys/${base}`)).body.data.keys['1'].public_key);
      const peer = generateKeyPairSync('ec', { namedCurve: curve });
      const peerPem = peer.publicKey.export({ format: 'pem', type: 'spki' }).toString();
      const name = `shared-${baseType}-${derivedType}`;
      ok(
        await post(`derive-key/${name}`, {
          base_key_name: base,
          peer_public_key: peerPem,
          derived_key_type: derivedType,
        }),
        204,
      );
      const read = ok(await d.req('GET', `transit/keys/${name}`)).body.data;
      expect(read.type).toBe(derivedType);
      expect(read.exportable).toBe(false);

      // the peer's side: Z from its private key and keyhold's public key, leftmost `size` bytes
      const key = diffieHellman({ privateKey: peer.privateKey as KeyObject, publicKey: ours }).subarray(0, size);
      const msg = Buffer.from(`agreed over ${curve}`);
      const ct = ok(await post(`encrypt/${name}`, { plaintext: b64(msg) })).body.data.ciphertext as string;
      expect(peerOpen(derivedType, key, Buffer.from(ct.split(':')[2]!, 'base64')).equals(msg)).toBe(true);
      const back = `vault:v1:${peerSeal(derivedType, key, Buffer.from('from the peer')).toString('base64')}`;
      expect(
        Buffer.from(ok(await post(`decrypt/${name}`, { ciphertext: back })).body.data.plaintext, 'base64').toString(),
      ).toBe('from the peer');
    });
  }

  test('bad input: 400 naming the field; an existing name is refused; nothing is created', async () => {
    ok(await post('keys/ec-bad', { type: 'ecdsa-p256' }));
    ok(await post('keys/ed-bad', { type: 'ed25519' }));
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ base_key_name: 'ec-bad' }, /peer_public_key.*not provided/],
      [{ base_key_name: 'ec-bad', peer_public_key: 'junk' }, /peer_public_key/],
      [{ base_key_name: 'ec-bad', peer_public_key: p384 }, /peer_public_key.*P-256/],
      [{ base_key_name: 'nope', peer_public_key: p256 }, /base_key_name.*not found/],
      [{ base_key_name: 'ed-bad', peer_public_key: p256 }, /base_key_name.*does not support key agreement/],
      [{ base_key_name: 'ec-bad', peer_public_key: p256, derived_key_type: 'rsa-2048' }, /derived_key_type/],
      [
        { base_key_name: 'ec-bad', peer_public_key: p256, key_derivation_algorithm: 'hkdf' },
        /key_derivation_algorithm/,
      ],
      [{ base_key_name: 'ec-bad', peer_public_key: p256, base_key_version: 5 }, /version/],
    ];
    for (const [body, re] of cases) {
      const r = await post('derive-key/never', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(err(r)).toMatch(re);
    }
    expect((await d.req('GET', 'transit/keys/never')).status).toBe(404);
    ok(await post('derive-key/once', { base_key_name: 'ec-bad', peer_public_key: p256 }), 204);
    expect((await post('derive-key/once', { base_key_name: 'ec-bad', peer_public_key: p256 })).status).toBe(400);
  });
});
