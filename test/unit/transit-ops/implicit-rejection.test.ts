/**
 * RSAES-PKCS1-v1_5 implicit rejection (draft-irtf-cfrg-rsa-guidance; issue 20): OpenSSL's known
 * answers (test/vectors/rsa-pkcs1-implicit-rejection.json), and, where the running Node's OpenSSL
 * does implicit rejection itself (3.2+), the same answers as node:crypto for random ciphertexts.
 */
import { describe, expect, it } from 'vitest';
import {
  constants,
  createPrivateKey,
  createPublicKey,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rsaPkcs1DecryptImplicit } from '../../../src/engines/transit/ops/rsa-padding.js';
import { checkRewrapPaddings, decryptWithKey, encryptWithKey } from '../../../src/engines/transit/ops/encryption.js';
import { asymmetricKey } from './fixtures.js';
import type { TransitKey } from '../../../src/engines/transit/keyring/types.js';

interface VectorCase {
  comment: string;
  ciphertext: string;
  message: string;
  padding_valid: boolean;
}
interface VectorFile {
  source: string;
  keys: { name: string; pem: string; cases: VectorCase[] }[];
}

const vectors = JSON.parse(
  readFileSync(new URL('../../vectors/rsa-pkcs1-implicit-rejection.json', import.meta.url), 'utf8'),
) as VectorFile;

/** A one-version rsa-3072 transit key holding `priv`. */
function transitKeyOf(priv: KeyObject): TransitKey {
  const key = asymmetricKey('rsa-3072');
  const v = key.versions.get(1)!;
  key.versions.set(1, { ...v, privateKey: priv, publicKey: createPublicKey(priv) });
  return key;
}

/** True when this Node's OpenSSL decrypts PKCS#1 v1.5 with implicit rejection (it refuses otherwise). */
function nodeHasImplicitRejection(priv: KeyObject): boolean {
  try {
    privateDecrypt(
      { key: priv, padding: constants.RSA_PKCS1_PADDING },
      publicEncrypt({ key: createPublicKey(priv), padding: constants.RSA_PKCS1_PADDING }, Buffer.from('probe')),
    );
    return true;
  } catch {
    return false;
  }
}

describe('implicit rejection: OpenSSL known answers', () => {
  expect(vectors.source).toMatch(/evppkey_rsa_common\.txt/);
  for (const k of vectors.keys) {
    const priv = createPrivateKey(k.pem);
    for (const c of k.cases) {
      it(`${k.name}: ${c.comment}`, () => {
        const r = rsaPkcs1DecryptImplicit(priv, Buffer.from(c.ciphertext, 'hex'));
        expect(r).not.toBeNull();
        expect(r!.message.toString('hex')).toBe(c.message);
        expect(r!.valid).toBe(c.padding_valid);
      });
    }
  }
});

describe('implicit rejection through the transit decrypt paths', () => {
  const k3072 = vectors.keys.find((k) => k.name === 'RSA-3072')!;
  const priv = createPrivateKey(k3072.pem);
  const key = transitKeyOf(priv);
  const invalid = k3072.cases.find((c) => !c.padding_valid && c.message.length > 0)!;
  const valid = k3072.cases.find((c) => c.padding_valid)!;
  const ct = (hex: string) => 'vault:v1:' + Buffer.from(hex, 'hex').toString('base64');

  it('rewrap mode answers the synthetic message for invalid padding and the real one for valid', () => {
    expect(
      decryptWithKey(key, ct(invalid.ciphertext), { padding: 'pkcs1v15', implicitRejection: true }).plaintext.toString(
        'hex',
      ),
    ).toBe(invalid.message);
    expect(
      decryptWithKey(key, ct(valid.ciphertext), { padding: 'pkcs1v15', implicitRejection: true }).plaintext.toString(
        'hex',
      ),
    ).toBe(valid.message);
  });

  it("decrypt keeps Vault's error for invalid padding (its caller may read plaintext anyway)", () => {
    expect(() => decryptWithKey(key, ct(invalid.ciphertext), { padding: 'pkcs1v15' })).toThrow(
      'failed to RSA decrypt the ciphertext: crypto/rsa: decryption error',
    );
    expect(decryptWithKey(key, ct(valid.ciphertext), { padding: 'pkcs1v15' }).plaintext.toString('hex')).toBe(
      valid.message,
    );
  });

  it('the synthetic message is deterministic per ciphertext and differs between ciphertexts and keys', () => {
    const other = asymmetricKey('rsa-2048');
    const c1 = randomBytes(256);
    c1[0] = 0x01; // below any 2048-bit modulus
    const c2 = Buffer.from(c1);
    c2[255] ^= 1;
    const run = (k: TransitKey, c: Buffer) =>
      decryptWithKey(k, 'vault:v1:' + c.toString('base64'), {
        padding: 'pkcs1v15',
        implicitRejection: true,
      }).plaintext.toString('hex');
    expect(run(other, c1)).toBe(run(other, c1));
    expect(run(other, c1)).not.toBe(run(other, c2));
    const two = asymmetricKey('rsa-2048', 2); // its version 2 is another private key of the same size
    const otherKey: TransitKey = { ...two, versions: new Map([[1, { ...two.versions.get(2)!, version: 1 }]]) };
    expect(run(otherKey, c1)).not.toBe(run(other, c1));
  });

  it('synthetic lengths stay within 0..k-11, as a valid message', () => {
    const k = asymmetricKey('rsa-2048');
    const lengths = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const c = randomBytes(256);
      c[0] = 0x01;
      const r = rsaPkcs1DecryptImplicit(k.versions.get(1)!.privateKey!, c)!;
      expect(r.valid).toBe(false);
      expect(r.message.length).toBeLessThanOrEqual(256 - 11);
      lengths.add(r.message.length);
    }
    expect(lengths.size).toBeGreaterThan(100); // spread over the range, not one fixed length
  });

  it('only what the public key decides is an error: a ciphertext longer than the modulus or not below it', () => {
    const k = asymmetricKey('rsa-2048');
    const p = k.versions.get(1)!.privateKey!;
    expect(rsaPkcs1DecryptImplicit(p, randomBytes(257))).toBeNull();
    expect(rsaPkcs1DecryptImplicit(p, Buffer.alloc(256, 0xff))).toBeNull();
  });

  it('rewrap from pkcs1v15 must encrypt with pkcs1v15 (an OAEP length failure would be an oracle)', () => {
    const k = asymmetricKey('rsa-2048');
    expect(() => checkRewrapPaddings(k, 'pkcs1v15', undefined)).toThrow(
      /encrypt_padding_scheme: must be pkcs1v15 when decrypt_padding_scheme is pkcs1v15 \(OAEP carries at most 190 bytes, PKCS#1 v1.5 up to 245/,
    );
    expect(() => checkRewrapPaddings(k, 'pkcs1v15', 'oaep')).toThrow(/encrypt_padding_scheme/);
    expect(() => checkRewrapPaddings(k, 'pkcs1v15', 'pkcs1v15')).not.toThrow();
    expect(() => checkRewrapPaddings(k, 'oaep', 'pkcs1v15')).not.toThrow();
    expect(() => checkRewrapPaddings(k, undefined, undefined)).not.toThrow();
    // every synthetic or real message fits a pkcs1v15 re-encryption under the same key
    expect(encryptWithKey(k, randomBytes(245), { padding: 'pkcs1v15' }).version).toBe(1);
  });
});

describe('implicit rejection agrees with node:crypto where its OpenSSL implements it (3.2+)', () => {
  const k = asymmetricKey('rsa-2048');
  const priv = k.versions.get(1)!.privateKey!;
  it.runIf(nodeHasImplicitRejection(priv))('100 random ciphertexts and 20 valid ones give the same messages', () => {
    for (let i = 0; i < 120; i++) {
      let c: Buffer;
      if (i < 20)
        c = publicEncrypt(
          { key: k.versions.get(1)!.publicKey!, padding: constants.RSA_PKCS1_PADDING },
          randomBytes(i * 5),
        );
      else {
        c = randomBytes(256);
        c[0] = 0x01;
      }
      const ours = rsaPkcs1DecryptImplicit(priv, c)!;
      const theirs = privateDecrypt({ key: priv, padding: constants.RSA_PKCS1_PADDING }, c);
      expect(ours.message.equals(theirs)).toBe(true);
    }
  });
});
