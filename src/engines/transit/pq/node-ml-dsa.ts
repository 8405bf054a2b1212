/**
 * node:crypto's ML-DSA (Node 24.7+ and 26, built on OpenSSL 3.5) when the running Node has it: pure
 * ML-DSA signing and verification on libuv's thread pool. Used only after a self-check at first use
 * (a fixed seed must give @noble/post-quantum's public key, and a node signature must verify with
 * noble); otherwise, and with KEYHOLD_PQ_IMPL=noble, everything stays on @noble/post-quantum.
 */
import { createPrivateKey, createPublicKey, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { ML_DSA, type MlDsaSet } from './pq-params.js';

/** DER of the algorithm OIDs id-ml-dsa-44/65/87 (2.16.840.1.101.3.4.3.17-19). */
const OID: Record<MlDsaSet, string> = {
  '44': '0609608648016503040311',
  '65': '0609608648016503040312',
  '87': '0609608648016503040313',
};

/** PKCS#8 PrivateKeyInfo holding only the 32-byte seed (the `seed [0]` choice of the ML-DSA private key). */
export function mlDsaPkcs8FromSeed(set: MlDsaSet, seed: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from('3034020100300b' + OID[set] + '04228020', 'hex'), seed]);
}

/** SubjectPublicKeyInfo of a raw ML-DSA public key. */
export function mlDsaSpki(set: MlDsaSet, publicKey: Uint8Array): Buffer {
  const bitString = Buffer.concat([Buffer.from([0]), publicKey]);
  const alg = Buffer.from('300b' + OID[set], 'hex');
  const bs = Buffer.concat([Buffer.from([0x03, 0x82, bitString.length >> 8, bitString.length & 0xff]), bitString]);
  const body = Buffer.concat([alg, bs]);
  return Buffer.concat([Buffer.from([0x30, 0x82, body.length >> 8, body.length & 0xff]), body]);
}

let state: boolean | undefined;

/** Does node:crypto do ML-DSA here (checked once against @noble/post-quantum)? */
export function nodeMlDsaAvailable(): boolean {
  if (state !== undefined) return state;
  state = false;
  if (process.env.KEYHOLD_PQ_IMPL === 'noble') return state;
  try {
    const seed = Buffer.alloc(32, 7);
    const priv = createPrivateKey({ key: mlDsaPkcs8FromSeed('44', seed), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(priv).export({ format: 'der', type: 'spki' });
    const { publicKey } = ML_DSA['44'].keygen(seed);
    if (!Buffer.from(spki).subarray(-publicKey.length).equals(Buffer.from(publicKey))) return state;
    const msg = Buffer.from('keyhold ML-DSA self-check');
    const sig = nodeSign(null, msg, priv);
    state = ML_DSA['44'].verify(sig, msg, publicKey);
  } catch {
    state = false;
  }
  return state;
}

/** For tests: forget the check (so KEYHOLD_PQ_IMPL is read again). */
export function resetNodeMlDsa(): void {
  state = undefined;
}

const privCache = new WeakMap<Uint8Array, KeyObject>();
const pubCache = new WeakMap<Uint8Array, KeyObject>();

/** The node private KeyObject of a seed (cached per seed buffer). */
export function nodeMlDsaPrivate(set: MlDsaSet, seed: Buffer): KeyObject {
  let k = privCache.get(seed);
  if (!k) {
    k = createPrivateKey({ key: mlDsaPkcs8FromSeed(set, seed), format: 'der', type: 'pkcs8' });
    privCache.set(seed, k);
  }
  return k;
}

/** The node public KeyObject of a raw public key (cached per buffer). */
export function nodeMlDsaPublic(set: MlDsaSet, publicKey: Uint8Array): KeyObject {
  let k = pubCache.get(publicKey);
  if (!k) {
    k = createPublicKey({ key: mlDsaSpki(set, publicKey), format: 'der', type: 'spki' });
    pubCache.set(publicKey, k);
  }
  return k;
}

/** Pure ML-DSA (empty context, hedged) on the thread pool. */
export function nodeMlDsaSign(set: MlDsaSet, seed: Buffer, message: Buffer): Promise<Buffer> {
  const key = nodeMlDsaPrivate(set, seed);
  return new Promise((resolve, reject) => nodeSign(null, message, key, (e, s) => (e ? reject(e) : resolve(s))));
}

/** Pure ML-DSA verification on the thread pool (false on any error). */
export function nodeMlDsaVerify(set: MlDsaSet, publicKey: Uint8Array, message: Buffer, sig: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      nodeVerify(null, message, nodeMlDsaPublic(set, publicKey), sig, (e, ok) => resolve(!e && ok));
    } catch {
      resolve(false);
    }
  });
}
