/**
 * NIST ACVP known answers (test/vectors/ml-dsa-acvp.json, slh-dsa-acvp.json; source in test/vectors/README.md)
 * against every ML-DSA/SLH-DSA implementation the running Node has: @noble/post-quantum (what transit
 * signs with on every Node), keyhold's own FIPS 204 code (pq/ml-dsa.ts, a third independent check), the
 * pre-hash message builder transit uses (pq/prehash.ts with noble's internal interface), and node:crypto's
 * ML-DSA where the Node has it (24.7+/26; skipped on Node 20, where the other checks still run).
 */
import { readFileSync } from 'node:fs';
import {
  createHash,
  createPrivateKey,
  randomBytes,
  createPublicKey,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import { sha224, sha256, sha384, sha512 } from '@noble/hashes/sha2.js';
import { sha3_224, sha3_256, sha3_384, sha3_512 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { ML_DSA, SLH_DSA, type MlDsaSet, type SlhDsaSet } from '../../../src/engines/transit/pq/pq-params.js';
import { prehashMessage } from '../../../src/engines/transit/pq/prehash.js';
import { mlDsaPkcs8FromSeed, mlDsaSpki, nodeMlDsaAvailable } from '../../../src/engines/transit/pq/node-ml-dsa.js';
import {
  formatMessage,
  mlDsaKeygen,
  mlDsaSign,
  mlDsaSignInternal,
  mlDsaVerify,
} from '../../../src/engines/transit/pq/ml-dsa.js';

interface KeyGen {
  tcId: number;
  parameterSet: string;
  seed: string;
  pk: string;
  sk: string;
}
interface SigGen {
  tcId: number;
  parameterSet: string;
  deterministic: boolean;
  preHash: string;
  hashAlg: string;
  sk: string;
  message: string;
  context?: string;
  rnd?: string;
  signature: string;
}
interface SigVer {
  tcId: number;
  parameterSet: string;
  preHash: string;
  hashAlg: string;
  pk: string;
  message: string;
  context?: string;
  signature: string;
  testPassed: boolean;
}
const V = JSON.parse(readFileSync(new URL('../../vectors/ml-dsa-acvp.json', import.meta.url), 'utf8')) as {
  keyGen: KeyGen[];
  sigGen: SigGen[];
  sigVer: SigVer[];
};
const S = JSON.parse(readFileSync(new URL('../../vectors/slh-dsa-acvp.json', import.meta.url), 'utf8')) as {
  keyGen: {
    tcId: number;
    parameterSet: string;
    skSeed: string;
    skPrf: string;
    pkSeed: string;
    sk: string;
    pk: string;
  }[];
};

const H = (s: string | undefined) => Buffer.from(s ?? '', 'hex');
const setOf = (ps: string) => ps.slice('ML-DSA-'.length) as MlDsaSet;
const level = (ps: string) => Number(setOf(ps)) as 44 | 65 | 87;
/** ACVP's hash names in Vault's spelling (SHA2-256 -> sha2-256). */
const vaultHash = (h: string) => h.toLowerCase();
const strength = { '44': 128, '65': 192, '87': 256 } as const;

describe('ACVP ML-DSA keyGen', () => {
  for (const t of V.keyGen) {
    it(`${t.parameterSet} tcId ${t.tcId}: noble and keyhold's own code give NIST's keys`, () => {
      const n = ML_DSA[setOf(t.parameterSet)].keygen(H(t.seed));
      expect(Buffer.from(n.publicKey).toString('hex').toUpperCase()).toBe(t.pk);
      expect(Buffer.from(n.secretKey).toString('hex').toUpperCase()).toBe(t.sk);
      const o = mlDsaKeygen(level(t.parameterSet), H(t.seed));
      expect(o.publicKey.toString('hex').toUpperCase()).toBe(t.pk);
      expect(o.secretKey.toString('hex').toUpperCase()).toBe(t.sk);
    });
  }
});

describe('ACVP ML-DSA sigGen (external interface: pure and HashML-DSA)', () => {
  for (const t of V.sigGen) {
    it(`${t.parameterSet} tcId ${t.tcId} (${t.preHash}${t.preHash === 'preHash' ? ' ' + t.hashAlg : ''}, ${t.deterministic ? 'deterministic' : 'hedged rnd'})`, () => {
      const set = setOf(t.parameterSet);
      const alg = ML_DSA[set];
      const rnd = t.deterministic ? Buffer.alloc(32) : H(t.rnd);
      const ctx = H(t.context);
      // noble, external interface
      const extraEntropy = t.deterministic ? false : rnd;
      const signer = t.preHash === 'preHash' ? null : alg;
      if (signer)
        expect(
          Buffer.from(signer.sign(H(t.message), H(t.sk), { context: ctx, extraEntropy }))
            .toString('hex')
            .toUpperCase(),
        ).toBe(t.signature);
      // transit's pre-hash path: digest of the message, M' from prehash.ts, noble's internal signer
      if (t.preHash === 'preHash') {
        const digest = Buffer.from(
          alg.prehash(nobleHash(t.hashAlg)).sign(H(t.message), H(t.sk), { context: ctx, extraEntropy }),
        )
          .toString('hex')
          .toUpperCase();
        expect(digest).toBe(t.signature);
        const m = prehashMessage(vaultHash(t.hashAlg), nodeDigest(t.hashAlg, H(t.message)), strength[set], ctx);
        expect(
          Buffer.from(alg.internal.sign(m, H(t.sk), { extraEntropy }))
            .toString('hex')
            .toUpperCase(),
        ).toBe(t.signature);
      }
      // keyhold's own FIPS 204 code
      const m2 = formatMessage(H(t.message), {
        context: ctx,
        preHash: t.preHash === 'preHash' ? { hash: vaultHash(t.hashAlg) } : undefined,
      });
      expect(mlDsaSignInternal(level(t.parameterSet), H(t.sk), m2, rnd).toString('hex').toUpperCase()).toBe(
        t.signature,
      );
    });
  }
});

describe('ACVP ML-DSA sigVer', () => {
  for (const t of V.sigVer) {
    it(`${t.parameterSet} tcId ${t.tcId}: ${t.testPassed ? 'valid' : 'invalid'} (${t.preHash})`, () => {
      const set = setOf(t.parameterSet);
      const alg = ML_DSA[set];
      const ctx = H(t.context);
      const pre = t.preHash === 'preHash';
      const noble = pre
        ? alg.prehash(nobleHash(t.hashAlg)).verify(H(t.signature), H(t.message), H(t.pk), { context: ctx })
        : alg.verify(H(t.signature), H(t.message), H(t.pk), { context: ctx });
      expect(noble).toBe(t.testPassed);
      if (pre) {
        const m = prehashMessage(vaultHash(t.hashAlg), nodeDigest(t.hashAlg, H(t.message)), strength[set], ctx);
        expect(alg.internal.verify(H(t.signature), m, H(t.pk))).toBe(t.testPassed);
      }
      expect(
        mlDsaVerify(level(t.parameterSet), H(t.pk), H(t.message), H(t.signature), {
          context: ctx,
          preHash: pre ? { hash: vaultHash(t.hashAlg) } : undefined,
        }),
      ).toBe(t.testPassed);
    });
  }
});

// The "s" (small) SHAKE sets take seconds per key generation in JS on a busy machine: the fast sets
// and SHA2-128s run here; the file keeps one vector of every set.
describe('ACVP SLH-DSA keyGen', () => {
  for (const t of S.keyGen.filter((x) => x.parameterSet.endsWith('f') || x.parameterSet === 'SLH-DSA-SHA2-128s')) {
    it(`${t.parameterSet} tcId ${t.tcId}`, () => {
      const alg = SLH_DSA[t.parameterSet.toLowerCase() as SlhDsaSet];
      const k = alg.keygen(Buffer.concat([H(t.skSeed), H(t.skPrf), H(t.pkSeed)]));
      expect(Buffer.from(k.publicKey).toString('hex').toUpperCase()).toBe(t.pk);
      expect(Buffer.from(k.secretKey).toString('hex').toUpperCase()).toBe(t.sk);
    });
  }
});

// Two independent implementations on every Node (noble and keyhold's own FIPS 204 code) over random
// keys and messages: the same key pair from a seed, and each verifies the other's signatures.
describe("noble and keyhold's own ML-DSA agree on random keys", () => {
  for (const set of ['44', '65', '87'] as const) {
    it(`ML-DSA-${set}`, () => {
      const seed = randomBytes(32);
      const msg = randomBytes(100);
      const n = ML_DSA[set].keygen(seed);
      const o = mlDsaKeygen(Number(set) as 44 | 65 | 87, seed);
      expect(o.publicKey.equals(Buffer.from(n.publicKey))).toBe(true);
      expect(o.secretKey.equals(Buffer.from(n.secretKey))).toBe(true);
      expect(
        mlDsaVerify(Number(set) as 44 | 65 | 87, o.publicKey, msg, Buffer.from(ML_DSA[set].sign(msg, n.secretKey))),
      ).toBe(true);
      expect(ML_DSA[set].verify(mlDsaSign(Number(set) as 44 | 65 | 87, o.secretKey, msg), msg, n.publicKey)).toBe(true);
    });
  }
});

// node:crypto has ML-DSA on Node 24.7+/26 only: there the vectors also check node, and node and noble
// verify each other's signatures over random keys.
describe.skipIf(!nodeMlDsaAvailable())('node:crypto ML-DSA (where the running Node has it)', () => {
  it('keyGen vectors: the seed-only PKCS#8 gives NIST public keys', () => {
    for (const t of V.keyGen) {
      const priv = createPrivateKey({
        key: mlDsaPkcs8FromSeed(setOf(t.parameterSet), H(t.seed)),
        format: 'der',
        type: 'pkcs8',
      });
      const spki = Buffer.from(createPublicKey(priv).export({ format: 'der', type: 'spki' }));
      expect(spki.equals(mlDsaSpki(setOf(t.parameterSet), H(t.pk)))).toBe(true);
    }
  });
  it('sigVer vectors (pure, empty context): node agrees with NIST', () => {
    for (const t of V.sigVer.filter((x) => x.preHash === 'pure' && !x.context)) {
      const pub = createPublicKey({ key: mlDsaSpki(setOf(t.parameterSet), H(t.pk)), format: 'der', type: 'spki' });
      expect(nodeVerify(null, H(t.message), pub, H(t.signature))).toBe(t.testPassed);
    }
  });
  it('node signs, noble verifies; noble signs, node verifies (all sets)', () => {
    for (const set of ['44', '65', '87'] as const) {
      const seed = Buffer.alloc(32, Number(set));
      const { secretKey, publicKey } = ML_DSA[set].keygen(seed);
      const priv = createPrivateKey({ key: mlDsaPkcs8FromSeed(set, seed), format: 'der', type: 'pkcs8' });
      const pub = createPublicKey({ key: mlDsaSpki(set, publicKey), format: 'der', type: 'spki' });
      const msg = Buffer.from(`cross-check ${set}`);
      expect(ML_DSA[set].verify(nodeSign(null, msg, priv), msg, publicKey)).toBe(true);
      expect(nodeVerify(null, msg, pub, Buffer.from(ML_DSA[set].sign(msg, secretKey)))).toBe(true);
    }
  });
});

function nobleHash(name: string) {
  const h = {
    'SHA2-224': sha224,
    'SHA2-256': sha256,
    'SHA2-384': sha384,
    'SHA2-512': sha512,
    'SHA3-224': sha3_224,
    'SHA3-256': sha3_256,
    'SHA3-384': sha3_384,
    'SHA3-512': sha3_512,
  }[name];
  if (!h) throw new Error(`hash ${name}`);
  return h;
}
function nodeDigest(name: string, data: Buffer): Buffer {
  return createHash(name.toLowerCase().replace('sha2-', 'sha')).update(data).digest();
}
