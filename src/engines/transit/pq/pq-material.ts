/**
 * Key material of the post-quantum types. What a version stores in `key`:
 * - `ml-dsa`: the 32-byte FIPS 204 seed (the key pair is expanded from it on first use and cached);
 * - `slh-dsa`: the FIPS 205 secret key SK.seed‖SK.prf‖PK.seed‖PK.root (4n bytes; it holds the public key);
 * - `hybrid`: the ML-DSA seed, with the classical half as the version's private/public KeyObjects.
 * Encodings: raw public keys in base64 (read and `public-key` export), the IETF composite encodings
 * (mldsaPK‖tradPK, mldsaSeed‖tradSK) for hybrid exports.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import { invalid } from '../../../framework/errors.js';
import type { HybridEcType, KeyVersion, TransitKey } from '../keyring/types.js';
import { mlDsa, slhDsa } from './pq-params.js';
import { poolSlhKeygen } from './pq-pool.js';

const generateKeyPairAsync = promisify(generateKeyPair);

/** Fresh material of one version: `key` plus the hybrid's classical key pair. */
export interface PqMaterial {
  key: Buffer;
  privateKey?: KeyObject;
  publicKey?: KeyObject;
}

const CURVE: Record<Exclude<HybridEcType, 'ed25519'>, string> = {
  'ecdsa-p256': 'P-256',
  'ecdsa-p384': 'P-384',
  'ecdsa-p521': 'P-521',
};

/** Generate a version's material for `key`'s type and parameter set. */
export async function generatePq(key: Pick<TransitKey, 'type' | 'parameterSet' | 'hybridEc'>): Promise<PqMaterial> {
  if (key.type === 'ml-dsa') return { key: randomBytes(32) };
  if (key.type === 'slh-dsa') {
    const alg = slhDsa(key.parameterSet);
    const seed = randomBytes(alg.lengths.seed!);
    const sk = await poolSlhKeygen(key.parameterSet!, seed);
    return { key: sk ?? Buffer.from(alg.keygen(seed).secretKey) };
  }
  const pair =
    key.hybridEc === 'ed25519'
      ? await generateKeyPairAsync('ed25519')
      : await generateKeyPairAsync('ec', { namedCurve: CURVE[key.hybridEc as Exclude<HybridEcType, 'ed25519'>] });
  return { key: randomBytes(32), privateKey: pair.privateKey, publicKey: pair.publicKey };
}

/** An expanded ML-DSA key pair, cached per stored seed. */
interface Expanded {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}
const expanded = new WeakMap<Buffer, Expanded>();

/** The ML-DSA key pair of a version (ml-dsa and hybrid). */
export function mlDsaPair(key: Pick<TransitKey, 'parameterSet'>, v: KeyVersion): Expanded {
  const seed = v.key;
  if (!seed || seed.length !== 32) throw invalid('requested version does not contain an ML-DSA seed');
  let e = expanded.get(seed);
  if (!e) {
    e = mlDsa(key.parameterSet).keygen(seed);
    expanded.set(seed, e);
  }
  return e;
}

/** The SLH-DSA secret key of a version and its public key (the last 2n bytes). */
export function slhPair(key: Pick<TransitKey, 'parameterSet'>, v: KeyVersion): Expanded {
  const alg = slhDsa(key.parameterSet);
  const sk = v.key;
  if (!sk || sk.length !== alg.lengths.secretKey)
    throw invalid('requested version does not contain an SLH-DSA secret key');
  return { secretKey: sk, publicKey: sk.subarray(sk.length - alg.lengths.publicKey!) };
}

/** The classical public key of a hybrid version in the composite encoding (EC uncompressed point, raw Ed25519). */
export function tradPublicRaw(pub: KeyObject): Buffer {
  const j = pub.export({ format: 'jwk' });
  if (j.kty === 'OKP') return Buffer.from(j.x!, 'base64url');
  return Buffer.concat([Buffer.from([4]), Buffer.from(j.x!, 'base64url'), Buffer.from(j.y!, 'base64url')]);
}

/** The classical private key of a hybrid version in the composite encoding (RFC 5915 ECPrivateKey DER, raw Ed25519 seed). */
export function tradPrivateRaw(priv: KeyObject): Buffer {
  if (priv.asymmetricKeyType === 'ed25519') return Buffer.from(priv.export({ format: 'jwk' }).d!, 'base64url');
  return Buffer.from(priv.export({ format: 'der', type: 'sec1' }));
}

/** The primary public key of a version: ML-DSA or SLH-DSA raw bytes (hybrid: its ML-DSA half). */
export function pqPublicKey(key: TransitKey, v: KeyVersion): Buffer {
  return Buffer.from(key.type === 'slh-dsa' ? slhPair(key, v).publicKey : mlDsaPair(key, v).publicKey);
}

/** `public-key` export value: base64 raw public key; hybrid: base64 of mldsaPK‖tradPK (IETF composite). */
export function pqPublicExport(key: TransitKey, v: KeyVersion): string {
  if (key.type !== 'hybrid') return pqPublicKey(key, v).toString('base64');
  if (!v.publicKey) throw invalid('requested version has no classical public key');
  return Buffer.concat([pqPublicKey(key, v), tradPublicRaw(v.publicKey)]).toString('base64');
}

/** `signing-key` export value: ml-dsa the seed, slh-dsa the secret key, hybrid mldsaSeed‖tradSK; base64. */
export function pqPrivateExport(key: TransitKey, v: KeyVersion): string {
  if (!v.key) return '';
  if (key.type !== 'hybrid') return v.key.toString('base64');
  if (!v.privateKey) return '';
  return Buffer.concat([v.key, tradPrivateRaw(v.privateKey)]).toString('base64');
}

/** The name shown per version on read (`ml-dsa-65`, `slh-dsa-sha2-128s`, `ml-dsa-65+ecdsa-p256`). */
export function pqVersionName(key: TransitKey): string {
  if (key.type === 'ml-dsa') return `ml-dsa-${key.parameterSet}`;
  if (key.type === 'slh-dsa') return String(key.parameterSet);
  return `ml-dsa-${key.parameterSet}+${key.hybridEc}`;
}

/** The classical public key shown as `hybrid_public_key` (PEM for ECDSA, base64 for Ed25519). */
export function hybridPublicText(v: KeyVersion): string {
  const pub = v.publicKey;
  if (!pub) return '';
  if (pub.asymmetricKeyType === 'ed25519') return tradPublicRaw(pub).toString('base64');
  const pem = String(pub.export({ format: 'pem', type: 'spki' }));
  return pem.endsWith('\n') ? pem : pem + '\n';
}

/**
 * Material from imported bytes (BYOK): ml-dsa and hybrid take the 32-byte seed (hybrid: seed followed by
 * the classical key as PKCS#8 DER); slh-dsa takes the 3n-byte seed SK.seed‖SK.prf‖PK.seed or the 4n-byte
 * secret key (whose PK.root must match).
 */
export function pqFromImport(key: Pick<TransitKey, 'type' | 'parameterSet' | 'hybridEc'>, raw: Buffer): PqMaterial {
  if (key.type === 'ml-dsa') {
    if (raw.length !== 32)
      throw invalid('ciphertext', `ML-DSA keys are imported as their 32-byte seed, got ${raw.length} bytes`);
    return { key: Buffer.from(raw) };
  }
  if (key.type === 'slh-dsa') {
    const alg = slhDsa(key.parameterSet);
    const n = alg.lengths.publicKey! / 2;
    if (raw.length === 3 * n) return { key: Buffer.from(alg.keygen(raw).secretKey) };
    if (raw.length === 4 * n) {
      const again = alg.keygen(raw.subarray(0, 3 * n)).secretKey;
      if (again.length !== raw.length || !timingSafeEqual(Buffer.from(again), raw))
        throw invalid('ciphertext', 'SLH-DSA secret key: PK.root does not match the seeds');
      return { key: Buffer.from(raw) };
    }
    throw invalid(
      'ciphertext',
      `SLH-DSA ${key.parameterSet} keys are imported as the ${3 * n}-byte seed or the ${4 * n}-byte secret key, got ${raw.length} bytes`,
    );
  }
  if (raw.length <= 32)
    throw invalid(
      'ciphertext',
      'hybrid keys are imported as the 32-byte ML-DSA seed followed by the classical key (PKCS#8 DER)',
    );
  let priv: KeyObject;
  try {
    priv = createPrivateKey({ key: raw.subarray(32), format: 'der', type: 'pkcs8' });
  } catch {
    throw invalid('ciphertext', 'hybrid import: the classical key after the 32-byte seed is not PKCS#8 DER');
  }
  const want = key.hybridEc === 'ed25519' ? 'ed25519' : 'ec';
  const curve =
    key.hybridEc === 'ed25519'
      ? undefined
      : { 'ecdsa-p256': 'prime256v1', 'ecdsa-p384': 'secp384r1', 'ecdsa-p521': 'secp521r1' }[key.hybridEc!];
  if (priv.asymmetricKeyType !== want || (curve && priv.asymmetricKeyDetails?.namedCurve !== curve)) {
    throw invalid('ciphertext', `hybrid import: the classical key is not of type ${key.hybridEc}`);
  }
  return { key: Buffer.from(raw.subarray(0, 32)), privateKey: priv, publicKey: createPublicKey(priv) };
}
