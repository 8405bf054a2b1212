/** Property tests (fast-check): encrypt/decrypt, sign/verify and HMAC round trips over random inputs, contexts, key types and versions. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decryptWithKey, encryptWithKey } from '../../../src/engines/transit/ops/encryption.js';
import { signWithKey, verifyWithKey, parseHashAlgorithm } from '../../../src/engines/transit/ops/signing.js';
import { hmacAlgorithm, hmacWithKey, verifyHmacWithKey } from '../../../src/engines/transit/ops/hmac.js';
import { asymmetricKey, symmetricKey } from './fixtures.js';
import type { KeyTypeName } from '../../../src/engines/transit/keyring/types.js';

const AEAD: KeyTypeName[] = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'xchacha20-poly1305'];
const keys = new Map(
  AEAD.flatMap(
    (t) =>
      [
        [`${t}`, symmetricKey(t, 3)],
        [`${t}/derived`, symmetricKey(t, 3, { derived: true })],
        [`${t}/convergent`, symmetricKey(t, 3, { derived: true, convergent: true })],
      ] as const,
  ),
);
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));

describe('property: symmetric round trips', () => {
  it('decrypt(encrypt(p)) = p for every AEAD type, derivation mode, version, context and AAD', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...keys.keys()),
        bytes(300),
        bytes(40),
        bytes(20),
        fc.integer({ min: 0, max: 3 }),
        (name, pt, ctx, aad, version) => {
          const key = keys.get(name)!;
          const context = key.derived ? Buffer.concat([Buffer.from('c'), ctx]) : undefined;
          const { ciphertext, version: used } = encryptWithKey(key, pt, {
            context,
            associatedData: aad,
            keyVersion: version,
          });
          expect(used).toBe(version === 0 ? 3 : version);
          expect(decryptWithKey(key, ciphertext, { context, associatedData: aad }).plaintext).toEqual(pt);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('convergent keys: equal (context, plaintext) give equal ciphertexts; a different plaintext differs', () => {
    fc.assert(
      fc.property(fc.constantFrom(...AEAD), bytes(100), bytes(100), bytes(16), (type, a, b, ctx) => {
        const key = keys.get(`${type}/convergent`)!;
        const context = Buffer.concat([Buffer.from('x'), ctx]);
        const ca = encryptWithKey(key, a, { context }).ciphertext;
        expect(encryptWithKey(key, a, { context }).ciphertext).toBe(ca);
        if (!a.equals(b)) expect(encryptWithKey(key, b, { context }).ciphertext).not.toBe(ca);
      }),
      { numRuns: 150 },
    );
  });

  it('any single-byte change to a ciphertext payload is rejected', () => {
    const key = keys.get('aes256-gcm96')!;
    fc.assert(
      fc.property(bytes(64), fc.nat(), fc.integer({ min: 1, max: 255 }), (pt, pos, flip) => {
        const ct = encryptWithKey(key, pt).ciphertext;
        const raw = Buffer.from(ct.slice(9), 'base64');
        raw[pos % raw.length] ^= flip;
        expect(() => decryptWithKey(key, 'vault:v3:' + raw.toString('base64'))).toThrow();
      }),
      { numRuns: 200 },
    );
  });
});

describe('property: signatures and HMACs', () => {
  const signers = (['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'rsa-2048'] as KeyTypeName[]).map((t) =>
    asymmetricKey(t, 2),
  );
  const derivedEd = asymmetricKey('ed25519', 1, { derived: true });
  it('verify(sign(m)) holds and a different message fails, across types, versions, hashes and marshalings', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...signers),
        bytes(200),
        fc.constantFrom(1, 2),
        fc.constantFrom('sha2-256', 'sha2-384', 'sha3-256', 'sha2-512'),
        fc.constantFrom('asn1', 'jws') as fc.Arbitrary<'asn1' | 'jws'>,
        fc.constantFrom('pss', 'pkcs1v15'),
        (key, msg, ver, hash, marshaling, sigAlg) => {
          const o = {
            hash: parseHashAlgorithm(hash),
            prehashed: false,
            signatureAlgorithm: sigAlg,
            marshaling,
            saltLength: 0,
          };
          const { signature } = signWithKey(key, ver, msg, undefined, o);
          expect(signature.startsWith(`vault:v${ver}:`)).toBe(true);
          expect(verifyWithKey(key, msg, undefined, signature, o)).toBe(true);
          expect(verifyWithKey(key, Buffer.concat([msg, Buffer.from([1])]), undefined, signature, o)).toBe(false);
        },
      ),
      { numRuns: 120 },
    );
  });

  it('derived Ed25519: same context gives the same signature and public key', () => {
    fc.assert(
      fc.property(bytes(64), bytes(24), (msg, ctx) => {
        const context = Buffer.concat([Buffer.from('k'), ctx]);
        const o = {
          hash: parseHashAlgorithm('sha2-256'),
          prehashed: false,
          signatureAlgorithm: 'pss',
          marshaling: 'asn1' as const,
          saltLength: 0,
        };
        const a = signWithKey(derivedEd, 1, msg, context, o);
        const b = signWithKey(derivedEd, 1, msg, context, o);
        expect(b).toEqual(a);
        expect(verifyWithKey(derivedEd, msg, context, a.signature, o)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('HMAC verifies for the version it was made with, for every algorithm', () => {
    const key = symmetricKey('hmac', [Buffer.alloc(48, 1), Buffer.alloc(48, 2)]);
    fc.assert(
      fc.property(
        bytes(200),
        fc.constantFrom(1, 2),
        fc.constantFrom('sha1', 'sha2-224', 'sha2-256', 'sha2-512', 'sha3-384'),
        (input, ver, alg) => {
          const mac = hmacWithKey(key, hmacAlgorithm(alg), input, ver);
          expect(verifyHmacWithKey(key, hmacAlgorithm(alg), input, mac)).toBe(true);
          expect(verifyHmacWithKey(key, hmacAlgorithm(alg), Buffer.concat([input, Buffer.from('!')]), mac)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });
});
