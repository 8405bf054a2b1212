/**
 * RSA-OAEP hash selection (`hash_algorithm` on encrypt, decrypt and rewrap, Vault's names) through the
 * real router: ciphertexts made by keyhold decrypt with node:crypto using the exported private key and
 * the named hash (and fail with another), ciphertexts made outside decrypt in keyhold, the length limit
 * follows the hash, rewrap keeps the hash, unknown names are 400s naming the field.
 */
import {
  constants,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  publicEncrypt,
  type KeyObject,
} from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, startHarness, type Answer, type Harness } from '../../support/harness.js';

let d: Harness;
let priv: KeyObject;
beforeAll(async () => {
  d = await startHarness();
  ok(await post('keys/rsa', { type: 'rsa-2048', exportable: true }));
  priv = createPrivateKey(ok(await d.req('GET', 'transit/export/encryption-key/rsa/1')).body.data.keys['1']);
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
const raw = (ct: string) => Buffer.from(ct.split(':')[2]!, 'base64');
const NODE: Record<string, string> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-256': 'sha3-256',
  'sha3-512': 'sha3-512',
};

describe('RSA-OAEP hash_algorithm', () => {
  for (const [name, node] of Object.entries(NODE)) {
    test(`${name}: keyhold -> node:crypto and node:crypto -> keyhold`, async () => {
      const msg = Buffer.from(`oaep with ${name}`);
      const ct = ok(await post('encrypt/rsa', { plaintext: b64(msg), hash_algorithm: name })).body.data
        .ciphertext as string;
      expect(
        privateDecrypt({ key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: node }, raw(ct)).equals(msg),
      ).toBe(true);
      const other = name === 'sha2-256' ? 'sha1' : 'sha256';
      expect(() =>
        privateDecrypt({ key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: other }, raw(ct)),
      ).toThrow();
      const theirs = publicEncrypt(
        { key: createPublicKey(priv), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: node },
        Buffer.from('outside'),
      );
      const pt = ok(
        await post('decrypt/rsa', { ciphertext: `vault:v1:${theirs.toString('base64')}`, hash_algorithm: name }),
      ).body.data.plaintext;
      expect(Buffer.from(pt, 'base64').toString()).toBe('outside');
    });
  }

  test('the default is sha2-256; a wrong hash fails to decrypt with the one RSA error', async () => {
    const ct = ok(await post('encrypt/rsa', { plaintext: b64('x') })).body.data.ciphertext as string;
    expect(
      privateDecrypt({ key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, raw(ct)).toString(),
    ).toBe('x');
    const bad = await post('decrypt/rsa', { ciphertext: ct, hash_algorithm: 'sha2-512' });
    expect(bad.status).toBe(400);
    expect(err(bad)).toMatch(/failed to RSA decrypt/);
  });

  test('the length limit follows the hash: k - 2*hLen - 2 bytes', async () => {
    expect(
      (await post('encrypt/rsa', { plaintext: b64(Buffer.alloc(256 - 2 * 64 - 2)), hash_algorithm: 'sha2-512' }))
        .status,
    ).toBe(200);
    const long = await post('encrypt/rsa', {
      plaintext: b64(Buffer.alloc(256 - 2 * 64 - 1)),
      hash_algorithm: 'sha2-512',
    });
    expect(long.status).toBe(400);
    expect(err(long)).toMatch(/at most 126 bytes/);
  });

  test('rewrap decrypts and re-encrypts with the named hash; batch items carry their own', async () => {
    const ct = ok(await post('encrypt/rsa', { plaintext: b64('rewrapped'), hash_algorithm: 'sha2-384' })).body.data
      .ciphertext as string;
    const re = ok(await post('rewrap/rsa', { ciphertext: ct, hash_algorithm: 'sha2-384' })).body.data
      .ciphertext as string;
    expect(
      privateDecrypt({ key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha384' }, raw(re)).toString(),
    ).toBe('rewrapped');
    const batch = ok(
      await post('encrypt/rsa', {
        batch_input: [{ plaintext: b64('a'), hash_algorithm: 'sha1' }, { plaintext: b64('b') }],
      }),
    ).body.data.batch_results;
    expect(
      privateDecrypt(
        { key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
        raw(batch[0].ciphertext),
      ).toString(),
    ).toBe('a');
    expect(
      privateDecrypt(
        { key: priv, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
        raw(batch[1].ciphertext),
      ).toString(),
    ).toBe('b');
  });

  test('unknown or unusable names are 400s naming hash_algorithm', async () => {
    for (const h of ['md5', 'none', 'SHA256']) {
      const r = await post('encrypt/rsa', { plaintext: b64('x'), hash_algorithm: h });
      expect(r.status, h).toBe(400);
      expect(err(r)).toMatch(/hash_algorithm/);
    }
  });
});
