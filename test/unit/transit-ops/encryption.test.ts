/**
 * Encryption cross-checks: our ciphertexts are opened with independent code (node:crypto and
 * @noble/ciphers) from the raw key and the reference byte layout (transit-wire.md 4.2-4.4), and
 * ciphertexts built independently decrypt with ours.
 */
import { describe, expect, it } from 'vitest';
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
} from 'node:crypto';
import { gcm } from '@noble/ciphers/aes.js';
import { chacha20poly1305, xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { decryptWithKey, encryptWithKey } from '../../../src/engines/transit/ops/encryption.js';
import { asymmetricKey, publicOnly, symmetricKey } from './fixtures.js';
import type { KeyTypeName } from '../../../src/engines/transit/keyring/types.js';

const payloadOf = (ct: string) => Buffer.from(ct.split(':')[2]!, 'base64');
const nobleAead = (type: KeyTypeName, key: Buffer, nonce: Buffer, aad?: Buffer) =>
  type === 'chacha20-poly1305'
    ? chacha20poly1305(key, nonce, aad)
    : type === 'xchacha20-poly1305'
      ? xchacha20poly1305(key, nonce, aad)
      : gcm(key, nonce, aad);

describe('AEAD ciphertexts (reference 4.2 layout nonce || ct || tag)', () => {
  for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'] as KeyTypeName[]) {
    const nonceLen = type === 'xchacha20-poly1305' ? 24 : 12;
    it(`${type}: our ciphertext opens with @noble from the raw key`, () => {
      const key = symmetricKey(type);
      const pt = randomBytes(37);
      const aad = Buffer.from('header');
      const { ciphertext, version } = encryptWithKey(key, pt, { associatedData: aad });
      expect(version).toBe(1);
      expect(ciphertext.startsWith('vault:v1:')).toBe(true);
      const raw = payloadOf(ciphertext);
      expect(raw.length).toBe(nonceLen + pt.length + 16);
      const opened = nobleAead(type, key.versions.get(1)!.key!, raw.subarray(0, nonceLen), aad).decrypt(
        raw.subarray(nonceLen),
      );
      expect(Buffer.from(opened)).toEqual(pt);
    });
    it(`${type}: a ciphertext sealed by @noble decrypts with ours`, () => {
      const key = symmetricKey(type);
      const nonce = randomBytes(nonceLen);
      const pt = Buffer.from('made elsewhere');
      const sealed = nobleAead(type, key.versions.get(1)!.key!, nonce).encrypt(pt);
      const ct = 'vault:v1:' + Buffer.concat([nonce, sealed]).toString('base64');
      expect(decryptWithKey(key, ct).plaintext).toEqual(pt);
    });
  }

  it('AES-GCM ciphertext opens with node:crypto directly (aes-256-gcm, 12-byte nonce, 16-byte tag)', () => {
    const key = symmetricKey('aes256-gcm96');
    const pt = Buffer.from('node cross-check');
    const raw = payloadOf(encryptWithKey(key, pt).ciphertext);
    const d = createDecipheriv('aes-256-gcm', key.versions.get(1)!.key!, raw.subarray(0, 12));
    d.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()])).toEqual(pt);
  });

  it("wrong associated data fails with Go's GCM message (400)", () => {
    const key = symmetricKey('aes256-gcm96');
    const { ciphertext } = encryptWithKey(key, Buffer.from('x'), { associatedData: Buffer.from('a') });
    expect(() => decryptWithKey(key, ciphertext, { associatedData: Buffer.from('b') })).toThrow(
      /^cipher: message authentication failed$/,
    );
  });

  it('chacha20 authentication failure uses chacha20poly1305 wording', () => {
    const key = symmetricKey('chacha20-poly1305');
    const raw = payloadOf(encryptWithKey(key, Buffer.from('x')).ciphertext);
    raw[raw.length - 1] ^= 1;
    expect(() => decryptWithKey(key, 'vault:v1:' + raw.toString('base64'))).toThrow(
      'chacha20poly1305: message authentication failed',
    );
  });

  it('empty plaintext round-trips', () => {
    const key = symmetricKey('aes256-gcm96');
    expect(decryptWithKey(key, encryptWithKey(key, Buffer.alloc(0)).ciphertext).plaintext.length).toBe(0);
  });
});

describe('derived keys (reference 4.3)', () => {
  it('HKDF-SHA256, empty salt, info = context: matches @noble hkdf', () => {
    const key = symmetricKey('aes256-gcm96', 1, { derived: true });
    const context = Buffer.from('tenant-42');
    const raw = payloadOf(encryptWithKey(key, Buffer.from('hi'), { context }).ciphertext);
    const dk = hkdf(sha256, key.versions.get(1)!.key!, new Uint8Array(0), context, 32);
    expect(Buffer.from(gcm(dk, raw.subarray(0, 12)).decrypt(raw.subarray(12)))).toEqual(Buffer.from('hi'));
  });

  it('aes128 derives 16 bytes (HKDF prefix stream, node hkdfSync)', () => {
    const key = symmetricKey('aes128-gcm96', 1, { derived: true });
    const context = Buffer.from('c');
    const raw = payloadOf(encryptWithKey(key, Buffer.from('hi'), { context }).ciphertext);
    const dk = Buffer.from(hkdfSync('sha256', key.versions.get(1)!.key!, Buffer.alloc(0), context, 16));
    expect(Buffer.from(gcm(dk, raw.subarray(0, 12)).decrypt(raw.subarray(12)))).toEqual(Buffer.from('hi'));
  });

  it('legacy counter KDF: HMAC-SHA256(key, BE32(0) || context || BE32(256))', () => {
    const key = symmetricKey('aes256-gcm96', 1, { derived: true, kdf: 1 });
    const context = Buffer.from('legacy');
    const raw = payloadOf(encryptWithKey(key, Buffer.from('old'), { context }).ciphertext);
    const dk = hmac(
      sha256,
      key.versions.get(1)!.key!,
      Buffer.concat([Buffer.alloc(4), context, Buffer.from([0, 0, 1, 0])]),
    );
    expect(Buffer.from(gcm(dk, raw.subarray(0, 12)).decrypt(raw.subarray(12)))).toEqual(Buffer.from('old'));
  });

  it("a derived key without context fails with Vault's exact message", () => {
    const key = symmetricKey('aes256-gcm96', 1, { derived: true });
    expect(() => encryptWithKey(key, Buffer.from('x'))).toThrow(
      /^missing 'context' for key derivation; the key was created using a derived key/,
    );
  });

  it('a different context does not decrypt', () => {
    const key = symmetricKey('aes256-gcm96', 1, { derived: true });
    const { ciphertext } = encryptWithKey(key, Buffer.from('x'), { context: Buffer.from('a') });
    expect(() => decryptWithKey(key, ciphertext, { context: Buffer.from('b') })).toThrow(
      'cipher: message authentication failed',
    );
  });
});

describe('convergent encryption (reference 4.4)', () => {
  it('v3: nonce = HMAC-SHA256(hkdf[enc..enc+32], pt)[0:12]; same inputs give the same ciphertext', () => {
    const key = symmetricKey('aes256-gcm96', 1, { derived: true, convergent: true });
    const context = Buffer.from('ctx');
    const pt = Buffer.from('deterministic');
    const a = encryptWithKey(key, pt, { context }).ciphertext;
    expect(encryptWithKey(key, pt, { context }).ciphertext).toBe(a);
    const okm = Buffer.from(hkdf(sha256, key.versions.get(1)!.key!, new Uint8Array(0), context, 64));
    const nonce = createHmac('sha256', okm.subarray(32)).update(pt).digest().subarray(0, 12);
    const c = createCipheriv('aes-256-gcm', okm.subarray(0, 32), nonce);
    const expected = Buffer.concat([nonce, c.update(pt), c.final(), c.getAuthTag()]);
    expect(payloadOf(a)).toEqual(expected);
    expect(decryptWithKey(key, a, { context }).plaintext).toEqual(pt);
  });

  it('v2: nonce = HMAC-SHA256(context, pt)[0:12], nonce prefixed', () => {
    const key = symmetricKey('aes256-gcm96', 1, {
      derived: true,
      convergent: true,
      convergentVersion: 2,
      perVersionConvergent: 0,
    });
    const context = Buffer.from('ctx2');
    const pt = Buffer.from('v2 text');
    const ct = encryptWithKey(key, pt, { context }).ciphertext;
    const nonce = createHmac('sha256', context).update(pt).digest().subarray(0, 12);
    const dk = Buffer.from(hkdfSync('sha256', key.versions.get(1)!.key!, Buffer.alloc(0), context, 32));
    const c = createCipheriv('aes-256-gcm', dk, nonce);
    expect(payloadOf(ct)).toEqual(Buffer.concat([nonce, c.update(pt), c.final(), c.getAuthTag()]));
    expect(decryptWithKey(key, ct, { context }).plaintext).toEqual(pt);
  });

  it('v1: caller nonce, payload without nonce; decrypt needs the nonce', () => {
    const key = symmetricKey('aes256-gcm96', 1, {
      derived: true,
      convergent: true,
      convergentVersion: 1,
      perVersionConvergent: 0,
    });
    const context = Buffer.from('ctx1');
    const nonce = randomBytes(12);
    const ct = encryptWithKey(key, Buffer.from('v1'), { context, nonce }).ciphertext;
    expect(payloadOf(ct).length).toBe(2 + 16);
    expect(decryptWithKey(key, ct, { context, nonce }).plaintext.toString()).toBe('v1');
    expect(() => decryptWithKey(key, ct, { context })).toThrow('invalid convergent nonce supplied');
    expect(() => encryptWithKey(key, Buffer.from('v1'), { context, nonce: randomBytes(8) })).toThrow(
      'base64-decoded nonce must be 12 bytes long when using convergent encryption with this key',
    );
  });

  it('a nonce on a non-v1 key is refused', () => {
    const key = symmetricKey('aes256-gcm96');
    expect(() => encryptWithKey(key, Buffer.from('x'), { nonce: randomBytes(12) })).toThrow(
      'provided nonce not allowed for this key',
    );
  });
});

describe('key versions and prefixes', () => {
  it('encrypts with the requested version and decrypts by the prefix', () => {
    const key = symmetricKey('aes256-gcm96', 3);
    const { ciphertext, version } = encryptWithKey(key, Buffer.from('v2'), { keyVersion: 2 });
    expect(version).toBe(2);
    expect(ciphertext.startsWith('vault:v2:')).toBe(true);
    expect(decryptWithKey(key, ciphertext).plaintext.toString()).toBe('v2');
  });

  it('version 0 in a ciphertext means 1', () => {
    const key = symmetricKey('aes256-gcm96');
    const ct = encryptWithKey(key, Buffer.from('zero')).ciphertext.replace('vault:v1:', 'vault:v0:');
    expect(decryptWithKey(key, ct).plaintext.toString()).toBe('zero');
  });

  it.each([
    [-1, 'requested version for encryption is negative'],
    [4, 'requested version for encryption is higher than the latest key version'],
  ])('key_version %i is refused: %s', (v, msg) => {
    expect(() => encryptWithKey(symmetricKey('aes256-gcm96', 3), Buffer.from('x'), { keyVersion: v })).toThrow(msg);
  });

  it('below min_encryption_version is refused', () => {
    const key = symmetricKey('aes256-gcm96', 3, { minEncryptionVersion: 2 });
    expect(() => encryptWithKey(key, Buffer.from('x'), { keyVersion: 1 })).toThrow(
      'requested version for encryption is less than the minimum encryption key version',
    );
  });

  it('ciphertext older than min_decryption_version is refused as too old', () => {
    const key = symmetricKey('aes256-gcm96', 2);
    const ct = encryptWithKey(key, Buffer.from('x'), { keyVersion: 1 }).ciphertext;
    key.minDecryptionVersion = 2;
    expect(() => decryptWithKey(key, ct)).toThrow('ciphertext or signature version is disallowed by policy (too old)');
  });

  it.each([
    ['v1:abc', 'invalid ciphertext: no prefix'],
    ['vault:v1abc', 'invalid ciphertext: wrong number of fields'],
    ['vault:vX:abc', 'invalid ciphertext: version number could not be decoded'],
    ['vault:v9:abc', 'invalid ciphertext: version is too new'],
    ['vault:v1:@@@', 'invalid ciphertext: could not decode base64'],
    ['vault:v1:AAAA', 'invalid ciphertext length'],
  ])('decrypt of %s fails with "%s"', (ct, msg) => {
    expect(() => decryptWithKey(symmetricKey('aes256-gcm96'), ct)).toThrow(msg);
  });

  it("signing key types refuse encryption and decryption with Vault's words", () => {
    const ec = asymmetricKey('ecdsa-p256');
    expect(() => encryptWithKey(ec, Buffer.from('x'))).toThrow(
      'message encryption not supported for key type ecdsa-p256',
    );
    expect(() => decryptWithKey(ec, 'vault:v1:AAAA')).toThrow(
      'message decryption not supported for key type ecdsa-p256',
    );
  });
});

describe('RSA encryption', () => {
  it('OAEP with SHA-256 and empty label: node privateDecrypt opens ours', () => {
    const key = asymmetricKey('rsa-2048');
    const ct = encryptWithKey(key, Buffer.from('rsa secret')).ciphertext;
    const raw = payloadOf(ct);
    expect(raw.length).toBe(256);
    const pt = privateDecrypt(
      { key: key.versions.get(1)!.privateKey!, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      raw,
    );
    expect(pt.toString()).toBe('rsa secret');
  });

  it('pkcs1v15: a node publicEncrypt ciphertext decrypts with ours (no privateDecrypt PKCS#1 in Node 20)', () => {
    const key = asymmetricKey('rsa-2048');
    const raw = publicEncrypt(
      { key: key.versions.get(1)!.publicKey!, padding: constants.RSA_PKCS1_PADDING },
      Buffer.from('v15'),
    );
    expect(
      decryptWithKey(key, 'vault:v1:' + raw.toString('base64'), { padding: 'pkcs1v15' }).plaintext.toString(),
    ).toBe('v15');
    const ours = encryptWithKey(key, Buffer.from('v15 ours'), { padding: 'pkcs1v15' }).ciphertext;
    expect(decryptWithKey(key, ours, { padding: 'pkcs1v15' }).plaintext.toString()).toBe('v15 ours');
  });

  it('OAEP limit is 190 bytes for 2048-bit keys; longer input is a 400', () => {
    const key = asymmetricKey('rsa-2048');
    expect(encryptWithKey(key, randomBytes(190)).version).toBe(1);
    expect(() => encryptWithKey(key, randomBytes(191))).toThrow(/message too long/);
  });

  it('public-key-only versions encrypt but cannot decrypt', () => {
    const full = asymmetricKey('rsa-2048');
    const pub = publicOnly(full);
    const ct = encryptWithKey(pub, Buffer.from('to the owner')).ciphertext;
    expect(decryptWithKey(full, ct).plaintext.toString()).toBe('to the owner');
    expect(() => decryptWithKey(pub, ct)).toThrow(/failed to RSA decrypt/);
  });

  it('a corrupted RSA ciphertext is a 400, not a crash', () => {
    const key = asymmetricKey('rsa-2048');
    expect(() => decryptWithKey(key, 'vault:v1:' + randomBytes(256).toString('base64'))).toThrow(
      /failed to RSA decrypt the ciphertext/,
    );
    expect(() =>
      decryptWithKey(key, 'vault:v1:' + randomBytes(256).toString('base64'), { padding: 'pkcs1v15' }),
    ).toThrow(/failed to RSA decrypt the ciphertext/);
  });

  it('associated_data and unknown padding schemes are refused on RSA keys', () => {
    const key = asymmetricKey('rsa-2048');
    expect(() => encryptWithKey(key, Buffer.from('x'), { associatedData: Buffer.from('a') })).toThrow(
      'associated_data provided for non-AEAD cipher suite rsa-2048',
    );
    expect(() => encryptWithKey(key, Buffer.from('x'), { padding: 'raw' })).toThrow(/padding_scheme argument invalid/);
  });
});
