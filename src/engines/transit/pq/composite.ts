/**
 * Composite ML-DSA signatures for `hybrid` keys, after draft-ietf-lamps-pq-composite-sigs-19 (Vault
 * Enterprise documents no encoding of its own):
 *   M'  = "CompositeAlgorithmSignatures2025" ‖ Label ‖ len(ctx) ‖ ctx ‖ PH(M)
 *   sig = ML-DSA.Sign(mldsaSK, M', ctx = Label) ‖ Trad.Sign(tradSK, M')
 * The classical half is ECDSA (DER, hashed with the curve's hash: SHA-256/384/512 for P-256/384/521)
 * or pure Ed25519. Labels follow the draft's table (COMPSIG-MLDSA65-ECDSA-P256-SHA512, ...); pairs the
 * draft does not list (e.g. ML-DSA-44 with P-521) get a label of the same shape with PH = SHA-512.
 */
import { createHash, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto';
import type { HybridEcType } from '../keyring/types.js';
import { mlDsa, type MlDsaSet } from './pq-params.js';

const PREFIX = Buffer.from('CompositeAlgorithmSignatures2025', 'ascii');

const TRAD: Record<HybridEcType, { label: string; hash: string | null }> = {
  'ecdsa-p256': { label: 'ECDSA-P256', hash: 'sha256' },
  'ecdsa-p384': { label: 'ECDSA-P384', hash: 'sha384' },
  'ecdsa-p521': { label: 'ECDSA-P521', hash: 'sha512' },
  ed25519: { label: 'Ed25519', hash: null },
};

/** The suite's label and pre-hash. */
export function compositeSuite(set: MlDsaSet, ec: HybridEcType): { label: Buffer; ph: 'sha256' | 'sha512' } {
  const ph = set === '44' && ec === 'ecdsa-p256' ? 'sha256' : 'sha512';
  return { label: Buffer.from(`COMPSIG-MLDSA${set}-${TRAD[ec].label}-${ph.toUpperCase()}`, 'ascii'), ph };
}

/** M' of the composite construction. */
export function compositeMessage(
  set: MlDsaSet,
  ec: HybridEcType,
  message: Uint8Array,
  ctx: Uint8Array = new Uint8Array(0),
): Buffer {
  if (ctx.length > 255) throw new RangeError('composite context must be at most 255 bytes');
  const { label, ph } = compositeSuite(set, ec);
  return Buffer.concat([PREFIX, label, Buffer.from([ctx.length]), ctx, createHash(ph).update(message).digest()]);
}

/** Sign: ML-DSA over M' with the label as context, then the classical signature over M'. */
export function compositeSign(
  set: MlDsaSet,
  ec: HybridEcType,
  mldsaSecret: Uint8Array,
  trad: KeyObject,
  message: Uint8Array,
  ctx?: Uint8Array,
): Buffer {
  const m = compositeMessage(set, ec, message, ctx);
  const { label } = compositeSuite(set, ec);
  const pq = mlDsa(set).sign(m, mldsaSecret, { context: label });
  const classical = nodeSign(TRAD[ec].hash, m, ec === 'ed25519' ? trad : { key: trad, dsaEncoding: 'der' });
  return Buffer.concat([pq, classical]);
}

/** Verify both halves (both must hold). */
export function compositeVerify(
  set: MlDsaSet,
  ec: HybridEcType,
  mldsaPublic: Uint8Array,
  trad: KeyObject,
  message: Uint8Array,
  sig: Uint8Array,
  ctx?: Uint8Array,
): boolean {
  const alg = mlDsa(set);
  const n = alg.lengths.signature!;
  if (sig.length <= n) return false;
  const m = compositeMessage(set, ec, message, ctx);
  const { label } = compositeSuite(set, ec);
  try {
    if (!alg.verify(sig.subarray(0, n), m, mldsaPublic, { context: label })) return false;
    return nodeVerify(TRAD[ec].hash, m, ec === 'ed25519' ? trad : { key: trad, dsaEncoding: 'der' }, sig.subarray(n));
  } catch {
    return false;
  }
}

/** The classical half's signature over M' on node's thread pool. */
export function classicalSignAsync(ec: HybridEcType, trad: KeyObject, m: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    nodeSign(TRAD[ec].hash, m, ec === 'ed25519' ? trad : { key: trad, dsaEncoding: 'der' }, (e, s) =>
      e ? reject(e) : resolve(s),
    ),
  );
}

/** The classical half's verification over M' on node's thread pool (false on any error). */
export function classicalVerifyAsync(ec: HybridEcType, trad: KeyObject, m: Buffer, sig: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      nodeVerify(TRAD[ec].hash, m, ec === 'ed25519' ? trad : { key: trad, dsaEncoding: 'der' }, sig, (e, ok) =>
        resolve(!e && ok),
      );
    } catch {
      resolve(false);
    }
  });
}
