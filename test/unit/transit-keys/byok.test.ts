import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  constants,
  createPublicKey,
  generateKeyPairSync,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
} from 'node:crypto';
import { aeskwp } from '@noble/ciphers/aes.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';
import {
  importHash,
  kwpUnwrap,
  kwpWrap,
  parseImportedMaterial,
  parseImportedPublicKey,
  parsePkcs8,
  unwrapImport,
  wrapForImport,
  WrappingKey,
} from '../../../src/engines/transit/keyring/byok.js';
import { ed25519PublicRaw } from '../../../src/engines/transit/keyring/derive.js';
import { memStorage } from './helpers.js';

const fixtures = JSON.parse(readFileSync('test/vectors/vault-import-fixtures.json', 'utf8'));
// A 2048-bit stand-in wrapping key keeps the tests fast; the layout is the same with a 256-byte RSA block.
const wrapping = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** An import ciphertext built independently: node RSA-OAEP + @noble AES-KWP. */
function independentBlob(material: Buffer, hash = 'sha256'): Buffer {
  const eph = randomBytes(32);
  const rsa = publicEncrypt(
    { key: wrapping.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash },
    eph,
  );
  return Buffer.concat([rsa, Buffer.from(aeskwp(eph).encrypt(material))]);
}

describe('AES key wrap with padding (RFC 5649)', () => {
  test.each([16, 20, 32, 45, 512])('agrees with @noble aeskwp both ways for %d bytes', (n) => {
    const kek = randomBytes(32);
    const data = randomBytes(n);
    const ours = kwpWrap(kek, data);
    expect(ours.equals(Buffer.from(aeskwp(kek).encrypt(data)))).toBe(true);
    expect(kwpUnwrap(kek, Buffer.from(aeskwp(kek).encrypt(data))).equals(data)).toBe(true);
  });

  test('detects tampering', () => {
    const kek = randomBytes(32);
    const w = kwpWrap(kek, randomBytes(32));
    w[3]! ^= 1;
    expect(() => kwpUnwrap(kek, w)).toThrow();
  });
});

describe('import ciphertext (reference 6.1)', () => {
  test.each(['SHA1', 'SHA224', 'SHA256', 'SHA384', 'SHA512', 'sha256'])(
    'unwraps a blob built with hash_function %s',
    (h) => {
      const material = randomBytes(32);
      const hash = importHash(h);
      expect(unwrapImport(wrapping.privateKey, independentBlob(material, hash), hash).equals(material)).toBe(true);
    },
  );

  test('refuses SHA-256 spelling, short ciphertexts, wrong hash and a non-256-bit ephemeral key', () => {
    expect(() => importHash('SHA-256')).toThrow('hash_function: unknown hash function: SHA-256');
    expect(() => unwrapImport(wrapping.privateKey, randomBytes(200), 'sha256')).toThrow(
      'ciphertext: provided ciphertext is too short',
    );
    expect(() => unwrapImport(wrapping.privateKey, independentBlob(randomBytes(32), 'sha1'), 'sha256')).toThrow(
      /^ciphertext: failed to decrypt the ephemeral AES key/,
    );
    const eph = randomBytes(16);
    const rsa = publicEncrypt(
      { key: wrapping.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      eph,
    );
    expect(() => unwrapImport(wrapping.privateKey, Buffer.concat([rsa, randomBytes(40)]), 'sha256')).toThrow(
      'ciphertext: expected ephemeral AES key to be 256-bit',
    );
  });

  test('our wrapForImport output is unwrapped by an independent @noble KWP', () => {
    const material = randomBytes(48);
    const blob = wrapForImport(wrapping.publicKey, material);
    const eph = privateDecrypt(
      { key: wrapping.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      blob.subarray(0, 256),
    );
    expect(Buffer.from(aeskwp(eph).decrypt(blob.subarray(256))).equals(material)).toBe(true);
  });
});

describe('target key encodings', () => {
  test("symmetric keys must have the type's exact length; hmac 32..512", () => {
    expect(parseImportedMaterial('aes128-gcm96', randomBytes(16)).key!.length).toBe(16);
    expect(() => parseImportedMaterial('aes256-gcm96', randomBytes(16))).toThrow(
      'invalid key size 16 bytes for key type aes256-gcm96',
    );
    expect(parseImportedMaterial('hmac', randomBytes(100)).keySize).toBe(100);
    expect(() => parseImportedMaterial('hmac', randomBytes(20))).toThrow(/invalid key size 20 bytes for key type hmac/);
  });

  test('asymmetric keys are PKCS#8 of the matching curve or size', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const pkcs8 = Buffer.from(ec.privateKey.export({ format: 'der', type: 'pkcs8' }));
    expect(parseImportedMaterial('ecdsa-p384', pkcs8).privateKey!.asymmetricKeyType).toBe('ec');
    expect(() => parseImportedMaterial('ecdsa-p256', pkcs8)).toThrow('invalid curve: expected P-256, got P-384');
    const rsa = Buffer.from(wrapping.privateKey.export({ format: 'der', type: 'pkcs8' }));
    expect(() => parseImportedMaterial('rsa-4096', rsa)).toThrow('invalid key size: expected 512 bytes, got 256 bytes');
    expect(() => parseImportedMaterial('ed25519', randomBytes(48))).toThrow(/failed to parse PKCS#8/);
  });

  test("imports Vault's NSS-style Ed25519 fixture (vector 5) as the Ed25519 key of its 32-byte seed", () => {
    const raw = Buffer.from(fixtures.nss_ed25519_pkcs8, 'base64');
    const m = parseImportedMaterial('ed25519', raw);
    // ECPrivateKey { 1, OCTET STRING seed, [1] public } inside; Vault uses ed25519.NewKeyFromSeed(seed).
    const seed = raw.subarray(36, 68);
    expect(m.key!.subarray(0, 32).equals(seed)).toBe(true);
    expect(ed25519PublicRaw(m.publicKey!).equals(Buffer.from(ed25519.getPublicKey(seed)))).toBe(true);
    // The public value NSS embedded is the X25519 form of the same scalar (checked with @noble).
    expect(Buffer.from(x25519.getPublicKey(seed)).equals(raw.subarray(raw.length - 32))).toBe(true);
    expect(m.key!.length).toBe(64);
  });

  test("imports Vault's RSASSA-PSS-OID PKCS#8 fixture (vector 5) as an ordinary rsa-2048 key", () => {
    const k = parsePkcs8(Buffer.from(fixtures.rsa_pss_pkcs8, 'base64'));
    expect(k.asymmetricKeyType).toBe('rsa');
    expect(k.asymmetricKeyDetails!.modulusLength).toBe(2048);
    expect(parseImportedMaterial('rsa-2048', Buffer.from(fixtures.rsa_pss_pkcs8, 'base64')).publicKey).toBeDefined();
  });

  test('public-key imports check type and refuse types without public keys', () => {
    const ed = generateKeyPairSync('ed25519');
    const pem = String(ed.publicKey.export({ format: 'pem', type: 'spki' }));
    expect(ed25519PublicRaw(parseImportedPublicKey('ed25519', pem)).equals(ed25519PublicRaw(ed.publicKey))).toBe(true);
    expect(() => parseImportedPublicKey('ecdsa-p256', pem)).toThrow(
      'public_key: error importing key: invalid key type: expected ecdsa-p256, got ed25519',
    );
    expect(() => parseImportedPublicKey('aes256-gcm96', pem)).toThrow(
      'public_key: provided type does not support public_key import',
    );
    expect(() => parseImportedPublicKey('ed25519', 'nonsense')).toThrow(/^public_key: error parsing public key/);
  });
});

describe('wrapping key', () => {
  test('is created once, persisted, and shared by concurrent callers', async () => {
    const s = memStorage();
    const w = new WrappingKey(s);
    const [a, b] = await Promise.all([w.get(), w.get()]);
    expect(a).toBe(b);
    expect(a.asymmetricKeyDetails!.modulusLength).toBe(4096);
    const again = await new WrappingKey(s).get();
    expect(createPublicKey(again).export({ format: 'pem', type: 'spki' })).toBe(
      createPublicKey(a).export({ format: 'pem', type: 'spki' }),
    );
    expect((await w.publicPem()).endsWith('-----END PUBLIC KEY-----\n')).toBe(true);
  });
});
