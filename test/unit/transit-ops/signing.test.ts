/**
 * Signatures: reference section 10 vectors (ECDSA P-256/P-384 from Vault's tests), and our
 * signatures checked by independent verifiers (node:crypto, @noble/curves) for every key type,
 * marshaling, RSA padding and salt rule (reference 4.6-4.8).
 */
import { describe, expect, it } from 'vitest';
import {
  constants,
  createHash,
  createPrivateKey,
  createPublicKey,
  publicDecrypt,
  verify as nodeVerify,
} from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256, p384, p521 } from '@noble/curves/nist.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import {
  checkSignatureRequest,
  parseHashAlgorithm,
  parseMarshaling,
  parseSaltLength,
  signWithKey,
  verifyWithKey,
  type SignatureOptions,
} from '../../../src/engines/transit/ops/signing.js';
import { asymmetricKey, ed25519FromSeed, publicOnly } from './fixtures.js';
import type { KeyVersion, TransitKey } from '../../../src/engines/transit/keyring/types.js';
import { symmetricKey } from './fixtures.js';

const FOX = Buffer.from('the quick brown fox');
const opts = (o: Partial<SignatureOptions> & { hashName?: string } = {}): SignatureOptions => ({
  hash: parseHashAlgorithm(o.hashName ?? 'sha2-256'),
  prehashed: o.prehashed ?? false,
  signatureAlgorithm: o.signatureAlgorithm ?? 'pss',
  marshaling: o.marshaling ?? 'asn1',
  saltLength: o.saltLength ?? 0,
});
const sigBytes = (s: string, jws = false) => Buffer.from(s.split(':')[2]!, jws ? 'base64url' : 'base64');

function ecKeyFromHex(curve: 'P-256' | 'P-384', size: number, x: string, y: string, d: string): TransitKey {
  const b = (h: string) => Buffer.from(h.padStart(size * 2, '0'), 'hex').toString('base64url');
  const privateKey = createPrivateKey({ key: { kty: 'EC', crv: curve, x: b(x), y: b(y), d: b(d) }, format: 'jwk' });
  const key = asymmetricKey(curve === 'P-256' ? 'ecdsa-p256' : 'ecdsa-p384');
  const v: KeyVersion = {
    version: 1,
    hmacKey: Buffer.alloc(32),
    privateKey,
    publicKey: createPublicKey(privateKey),
    creationTime: 0,
  };
  key.versions.set(1, v);
  return key;
}

describe('reference vectors (transit-wire.md section 10)', () => {
  it('vector 3: Vault\'s P-256 sha2-256 asn1 signature of "the quick brown fox" verifies', () => {
    const key = ecKeyFromHex(
      'P-256',
      32,
      '7336010a6da5935113d26d9ea4bb61b3b8d102c9a8083ed432f9b58fd7e80686',
      '4040aa31864691a8a9e7e3ec9250e85425b797ad7be34ba8df62bfbad45ebb0e',
      '99e5569be8683a2691dfc560ca9dfa71e887867a3af60635a08a3e3655aba3ef',
    );
    const sig =
      'vault:v1:MEUCIAgnEl9V8P305EBAlz68Nq4jZng5fE8k6MactcnlUw9dAiEAvJVePg3dazW6MaW7lRAVtEz82QJDVmR98tXCl8Pc7DA=';
    expect(verifyWithKey(key, FOX, undefined, sig, opts())).toBe(true);
    expect(verifyWithKey(key, Buffer.from('the quick brown fix'), undefined, sig, opts())).toBe(false);
  });

  it("vector 4: Vault's P-384 sha2-256 asn1 signature verifies", () => {
    const key = ecKeyFromHex(
      'P-384',
      48,
      '703457a84e48bfcb037cfb509f1870d2aa5b74c109c2f24624ab21444492575229f8711453e5c656dab596b4e26db30e',
      '411c5b7092a893dc8b7af39de3d21d1c26f45b27616baeac4c479ef3c9f21c194b5ac501dee47ba2b2cb243a54256524',
      '3de3e4fd2ecbc490e956f41f5003a1e57a84763cec7b722fa3427cf461a1148ea4d5206023bcce0422289f6633730759',
    );
    const sig =
      'vault:v1:MGUCMHHZLRN/3ehWuWACfSCMLtFtNEAdx6Rkwon2Lx6FWCyXCXqH6A8Pz8er0Qkgvm2ElQIxAO922LmUeYzHmDSfC5is/TjFu3b4Fb+1XtoBXncc2u4t2vSuTAxEv7WMh2D2YDdxeA==';
    expect(verifyWithKey(key, FOX, undefined, sig, opts())).toBe(true);
  });

  it("vector 7: the docs' signature sample parses as a 71-byte DER P-256 signature (wrong key -> false, not an error)", () => {
    const key = asymmetricKey('ecdsa-p256');
    const sig =
      'vault:v1:MEUCIQCyb869d7KWuA0hBM9b5NJrmWzMW3/pT+0XYCM9VmGR+QIgWWF6ufi4OS2xo1eS2V5IeJQfsi59qeMWtgX0LipxEHI=';
    expect(sigBytes(sig).length).toBe(71);
    expect(verifyWithKey(key, FOX, undefined, sig, opts())).toBe(false);
  });
});

describe('ECDSA', () => {
  const curves = [
    ['ecdsa-p256', p256, 32],
    ['ecdsa-p384', p384, 48],
    ['ecdsa-p521', p521, 66],
  ] as const;
  for (const [type, noble, size] of curves) {
    const pubPoint = (k: TransitKey) => {
      const jwk = k.versions.get(1)!.publicKey!.export({ format: 'jwk' });
      return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    };
    it(`${type} asn1: node verifies our DER signature`, () => {
      const key = asymmetricKey(type);
      const { signature } = signWithKey(key, 1, FOX, undefined, opts({ hashName: 'sha2-384' }));
      expect(nodeVerify('sha384', FOX, key.versions.get(1)!.publicKey!, sigBytes(signature))).toBe(true);
    });
    it(`${type} jws: r||s of ${size} bytes each, unpadded base64url, verified by @noble`, () => {
      const key = asymmetricKey(type);
      const { signature } = signWithKey(key, 1, FOX, undefined, opts({ marshaling: 'jws' }));
      expect(signature).not.toMatch(/[=+/]/);
      const raw = sigBytes(signature, true);
      expect(raw.length).toBe(2 * size);
      const digest = createHash('sha256').update(FOX).digest();
      expect(noble.verify(raw, digest, pubPoint(key), { prehash: false, lowS: false })).toBe(true);
      expect(verifyWithKey(key, FOX, undefined, signature, opts({ marshaling: 'jws' }))).toBe(true);
    });
    it(`${type} prehashed: signing a digest equals signing the message (node verifies over the message)`, () => {
      const key = asymmetricKey(type);
      const digest = createHash('sha512').update(FOX).digest();
      const { signature } = signWithKey(key, 1, digest, undefined, opts({ hashName: 'sha2-512', prehashed: true }));
      expect(nodeVerify('sha512', FOX, key.versions.get(1)!.publicKey!, sigBytes(signature))).toBe(true);
      expect(verifyWithKey(key, digest, undefined, signature, opts({ hashName: 'sha2-512', prehashed: true }))).toBe(
        true,
      );
    });
  }

  it('a high-S signature (n - s) still verifies (Vault does not normalise S)', () => {
    const key = asymmetricKey('ecdsa-p256');
    const { signature } = signWithKey(key, 1, FOX, undefined, opts({ marshaling: 'jws' }));
    const raw = sigBytes(signature, true);
    const n = p256.Point.CURVE().n;
    const s = BigInt('0x' + raw.subarray(32).toString('hex'));
    const flipped = Buffer.concat([raw.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
    expect(
      verifyWithKey(key, FOX, undefined, 'vault:v1:' + flipped.toString('base64url'), opts({ marshaling: 'jws' })),
    ).toBe(true);
  });

  it("malformed DER and trailing bytes give Vault's two messages", () => {
    const key = asymmetricKey('ecdsa-p256');
    const { signature } = signWithKey(key, 1, FOX, undefined, opts());
    const der = sigBytes(signature);
    expect(() =>
      verifyWithKey(key, FOX, undefined, 'vault:v1:' + Buffer.from('not der').toString('base64'), opts()),
    ).toThrow('supplied signature is invalid');
    expect(() =>
      verifyWithKey(
        key,
        FOX,
        undefined,
        'vault:v1:' + Buffer.concat([der, Buffer.from([0])]).toString('base64'),
        opts(),
      ),
    ).toThrow('supplied signature contains extra data');
    expect(() => verifyWithKey(key, FOX, undefined, 'vault:v1:***', opts())).toThrow('invalid base64 signature value');
  });

  it.each([
    ['sig', 'invalid signature: no prefix'],
    ['vault:v1', 'invalid signature: wrong number of fields'],
    ['vault:vz:AAAA', 'invalid signature: version number could not be decoded'],
    ['vault:v2:AAAA', 'invalid signature: version is too new'],
  ])('verify of %s fails with "%s"', (sig, msg) => {
    expect(() => verifyWithKey(asymmetricKey('ecdsa-p256'), FOX, undefined, sig, opts())).toThrow(msg);
  });

  it('public-key-only versions verify but cannot sign', () => {
    const full = asymmetricKey('ecdsa-p256');
    const { signature } = signWithKey(full, 1, FOX, undefined, opts());
    const pub = publicOnly(full);
    expect(verifyWithKey(pub, FOX, undefined, signature, opts())).toBe(true);
    expect(() => signWithKey(pub, 1, FOX, undefined, opts())).toThrow(
      'requested version for signing does not contain a private part',
    );
  });
});

describe('Ed25519', () => {
  it('pure Ed25519 over the raw input, deterministic, verified by @noble', () => {
    const key = asymmetricKey('ed25519');
    const a = signWithKey(key, 1, FOX, undefined, opts()).signature;
    expect(signWithKey(key, 1, FOX, undefined, opts()).signature).toBe(a);
    const pub = key.versions.get(1)!.key!.subarray(32);
    expect(ed25519.verify(sigBytes(a), FOX, pub)).toBe(true);
  });

  it('derived: seed = HKDF-SHA256(64-byte stored key, context)[0:32]; returns that public key', () => {
    const key = asymmetricKey('ed25519', 1, { derived: true });
    const context = Buffer.from('user-7');
    const r = signWithKey(key, 1, FOX, context, opts());
    const seed = hkdf(sha256, key.versions.get(1)!.key!, new Uint8Array(0), context, 32);
    const expectedPub = Buffer.from(ed25519.getPublicKey(seed));
    expect(r.publicKey).toEqual(expectedPub);
    expect(Buffer.from(ed25519.sign(FOX, seed))).toEqual(sigBytes(r.signature));
    expect(verifyWithKey(key, FOX, context, r.signature, opts())).toBe(true);
    expect(verifyWithKey(key, FOX, Buffer.from('user-8'), r.signature, opts())).toBe(false);
    expect(() => signWithKey(key, 1, FOX, undefined, opts())).toThrow(/^missing 'context' for key derivation/);
  });

  it('a Go-style key (seed || pub) signs like the seed alone', () => {
    const seed = Buffer.alloc(32, 7);
    const e = ed25519FromSeed(seed);
    const key = asymmetricKey('ed25519');
    key.versions.set(1, {
      version: 1,
      key: e.stored,
      hmacKey: Buffer.alloc(32),
      privateKey: e.privateKey,
      publicKey: e.publicKey,
      creationTime: 0,
    });
    expect(sigBytes(signWithKey(key, 1, FOX, undefined, opts()).signature)).toEqual(
      Buffer.from(ed25519.sign(FOX, seed)),
    );
  });

  it('prehashed and explicit sha2-512 are refused (pure Ed25519 only)', () => {
    const key = asymmetricKey('ed25519');
    expect(() => checkSignatureRequest(key, opts({ prehashed: true }), false)).toThrow(
      'only Pure Ed25519 signatures supported, prehashed must be false',
    );
    expect(() => checkSignatureRequest(key, opts({ hashName: 'sha2-512' }), true)).toThrow(
      'only Pure Ed25519 signatures supported, hash_alogithm should not be set',
    );
    expect(() => checkSignatureRequest(key, opts({ hashName: 'sha2-384' }), true)).not.toThrow();
  });
});

describe('RSA', () => {
  const k = asymmetricKey('rsa-2048');
  const pub = k.versions.get(1)!.publicKey!;

  it('pss + salt auto signs with the maximum salt (222 bytes for 2048/SHA-256); node verifies with that salt', () => {
    const { signature } = signWithKey(k, 1, FOX, undefined, opts());
    expect(
      nodeVerify(
        'sha256',
        FOX,
        { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 222 },
        sigBytes(signature),
      ),
    ).toBe(true);
    expect(verifyWithKey(k, FOX, undefined, signature, opts())).toBe(true);
  });

  it('pss + salt hash uses the digest length', () => {
    const { signature } = signWithKey(k, 1, FOX, undefined, opts({ saltLength: parseSaltLength('hash') }));
    expect(
      nodeVerify(
        'sha256',
        FOX,
        { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        sigBytes(signature),
      ),
    ).toBe(true);
    expect(verifyWithKey(k, FOX, undefined, signature, opts({ saltLength: -1 }))).toBe(true);
    expect(verifyWithKey(k, FOX, undefined, signature, opts({ saltLength: 20 }))).toBe(false);
  });

  it('pss with an explicit salt of 10 bytes', () => {
    const { signature } = signWithKey(k, 1, FOX, undefined, opts({ saltLength: 10, hashName: 'sha3-256' }));
    expect(
      nodeVerify(
        'sha3-256',
        FOX,
        { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 10 },
        sigBytes(signature),
      ),
    ).toBe(true);
  });

  it('pss prehashed (our own EMSA-PSS) verifies in node over the original message, and vice versa', () => {
    const digest = createHash('sha384').update(FOX).digest();
    for (const saltLength of [0, -1, 17]) {
      const o = opts({ hashName: 'sha2-384', prehashed: true, saltLength });
      const { signature } = signWithKey(k, 1, digest, undefined, o);
      const salt = saltLength === 0 ? 256 - 2 - 48 : saltLength === -1 ? 48 : saltLength;
      expect(
        nodeVerify(
          'sha384',
          FOX,
          { key: pub, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: salt },
          sigBytes(signature),
        ),
      ).toBe(true);
      expect(verifyWithKey(k, digest, undefined, signature, o)).toBe(true);
    }
    const { signature } = signWithKey(k, 1, FOX, undefined, opts({ hashName: 'sha2-384', saltLength: 5 }));
    expect(verifyWithKey(k, digest, undefined, signature, opts({ hashName: 'sha2-384', prehashed: true }))).toBe(true);
  });

  it('pkcs1v15 with DigestInfo: node verifies, also for a prehashed sha3-512 digest', () => {
    const a = signWithKey(k, 1, FOX, undefined, opts({ signatureAlgorithm: 'pkcs1v15' })).signature;
    expect(nodeVerify('sha256', FOX, { key: pub, padding: constants.RSA_PKCS1_PADDING }, sigBytes(a))).toBe(true);
    const digest = createHash('sha3-512').update(FOX).digest();
    const b = signWithKey(
      k,
      1,
      digest,
      undefined,
      opts({ signatureAlgorithm: 'pkcs1v15', prehashed: true, hashName: 'sha3-512' }),
    ).signature;
    expect(nodeVerify('sha3-512', FOX, { key: pub, padding: constants.RSA_PKCS1_PADDING }, sigBytes(b))).toBe(true);
    expect(verifyWithKey(k, FOX, undefined, b, opts({ signatureAlgorithm: 'pkcs1v15', hashName: 'sha3-512' }))).toBe(
      true,
    );
  });

  it('hash none + prehashed + pkcs1v15 signs the input without DigestInfo (RFC 3447 9.2 note)', () => {
    const input = Buffer.from('raw bytes to sign');
    const o = opts({ hashName: 'none', prehashed: true, signatureAlgorithm: 'pkcs1v15' });
    checkSignatureRequest(k, o, true);
    const { signature } = signWithKey(k, 1, input, undefined, o);
    expect(publicDecrypt({ key: pub, padding: constants.RSA_PKCS1_PADDING }, sigBytes(signature))).toEqual(input);
    expect(verifyWithKey(k, input, undefined, signature, o)).toBe(true);
  });

  it("hash none without prehashed pkcs1v15 is refused with Vault's message", () => {
    expect(() => checkSignatureRequest(k, opts({ hashName: 'none' }), true)).toThrow(
      'hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15',
    );
  });

  it('salt lengths: too large, below -1 and non-numeric are 400s', () => {
    expect(() => signWithKey(k, 1, FOX, undefined, opts({ saltLength: 223 }))).toThrow(
      'requested salt length 223 is invalid',
    );
    expect(() => parseSaltLength('-2')).toThrow('salt length is invalid: -2');
    expect(() => parseSaltLength('big')).toThrow("salt length neither 'auto', 'hash', nor an int: big");
  });

  it('a prehashed digest of the wrong length is a 400 naming input', () => {
    expect(() => signWithKey(k, 1, Buffer.alloc(10), undefined, opts({ prehashed: true }))).toThrow(
      /^input: a prehashed sha2-256 digest must be 32 bytes/,
    );
  });

  it('unknown signature algorithm is refused', () => {
    expect(() => checkSignatureRequest(k, opts({ signatureAlgorithm: 'x931' }), false)).toThrow(
      'unsupported rsa signature algorithm x931',
    );
  });
});

describe('request rules', () => {
  it('sha1 is refused when the key sets disallow_sha1, allowed otherwise', () => {
    const key = asymmetricKey('ecdsa-p256', 1, { disallowSha1: true });
    expect(() => checkSignatureRequest(key, opts({ hashName: 'sha1' }), true)).toThrow(
      /sha1 is disallowed for key "k"/,
    );
    const open = asymmetricKey('ecdsa-p256');
    checkSignatureRequest(open, opts({ hashName: 'sha1' }), true);
    const { signature } = signWithKey(open, 1, FOX, undefined, opts({ hashName: 'sha1' }));
    expect(nodeVerify('sha1', FOX, open.versions.get(1)!.publicKey!, sigBytes(signature))).toBe(true);
  });

  it('symmetric keys do not sign', () => {
    expect(() => checkSignatureRequest(symmetricKey('aes256-gcm96'), opts(), false)).toThrow(
      'key type aes256-gcm96 does not support signing',
    );
  });

  it("hash and marshaling names are validated with Vault's messages", () => {
    expect(() => parseHashAlgorithm('sha2-999')).toThrow('invalid hash algorithm "sha2-999"');
    expect(() => parseMarshaling('der')).toThrow('invalid marshaling type "der"');
  });
});

describe('thread-pool variants', () => {
  it.each(['ed25519', 'ecdsa-p384', 'rsa-2048'] as const)(
    '%s: async sign verifies synchronously and async verify agrees',
    async (type) => {
      const { signWithKeyAsync, verifyWithKeyAsync } = await import('../../../src/engines/transit/ops/signing.js');
      const key = asymmetricKey(type);
      const o = opts({ marshaling: type === 'ecdsa-p384' ? 'jws' : 'asn1' });
      const { signature } = await signWithKeyAsync(key, 1, FOX, undefined, o);
      expect(verifyWithKey(key, FOX, undefined, signature, o)).toBe(true);
      expect(await verifyWithKeyAsync(key, FOX, undefined, signature, o)).toBe(true);
      expect(await verifyWithKeyAsync(key, Buffer.from('x'), undefined, signature, o)).toBe(false);
      await expect(verifyWithKeyAsync(key, FOX, undefined, 'nope', o)).rejects.toThrow('invalid signature: no prefix');
    },
  );
});
