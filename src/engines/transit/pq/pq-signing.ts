/**
 * Sign and verify with the post-quantum key types. The input is signed itself (pure ML-DSA / SLH-DSA,
 * empty context) unless `prehashed=true`, which makes it HashML-DSA / HashSLH-DSA over the caller's
 * `hash_algorithm` digest. `hybrid` keys make composite signatures (composite.ts) and sign the input
 * only. Pure ML-DSA runs on node:crypto's thread pool where the running Node has ML-DSA
 * (node-ml-dsa.ts), else on @noble/post-quantum, whose signatures node verifies and vice versa.
 */
import { invalid } from '../../../framework/errors.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';
import { compositeSign, compositeVerify } from './composite.js';
import { nodeMlDsaAvailable, nodeMlDsaSign, nodeMlDsaVerify } from './node-ml-dsa.js';
import { ML_DSA_STRENGTH, mlDsa, slhDsa, slhStrength, type MlDsaSet, type SlhDsaSet } from './pq-params.js';
import { mlDsaPair, slhPair } from './pq-material.js';
import { prehashMessage } from './prehash.js';

/** What of the sign/verify request a post-quantum signature uses. */
export interface PqSignOptions {
  prehashed: boolean;
  /** Vault's hash name (`sha2-256`, ...), used only when prehashed. */
  hash: string;
}

/** Request rules: hybrid keys sign the input only; pre-hashes are checked per item. */
export function checkPqRequest(key: TransitKey, opts: PqSignOptions): void {
  if (key.type === 'hybrid' && opts.prehashed) throw invalid('prehashed', 'hybrid keys sign the input itself (the composite construction pre-hashes it); prehashed must be false');
}

function strength(key: TransitKey): number {
  return key.type === 'slh-dsa' ? slhStrength(key.parameterSet as SlhDsaSet) : ML_DSA_STRENGTH[key.parameterSet as MlDsaSet];
}

/** Sign on the calling thread (@noble/post-quantum; hedged). */
export function pqSign(key: TransitKey, v: KeyVersion, input: Buffer, opts: PqSignOptions): Buffer {
  if (key.type === 'hybrid') {
    if (!v.privateKey) throw invalid('requested version for signing does not contain a private part');
    return compositeSign(key.parameterSet as MlDsaSet, key.hybridEc!, mlDsaPair(key, v).secretKey, v.privateKey, input);
  }
  if (key.type === 'ml-dsa') {
    const alg = mlDsa(key.parameterSet);
    const sk = mlDsaPair(key, v).secretKey;
    if (!opts.prehashed) return Buffer.from(alg.sign(input, sk));
    return Buffer.from(alg.internal.sign(prehashMessage(opts.hash, input, strength(key)), sk));
  }
  const alg = slhDsa(key.parameterSet);
  const sk = slhPair(key, v).secretKey;
  if (!opts.prehashed) return Buffer.from(alg.sign(input, sk));
  return Buffer.from(alg.internal.sign(prehashMessage(opts.hash, input, strength(key)), sk));
}

/** As pqSign; pure ML-DSA goes to node:crypto's thread pool when available. */
export async function pqSignAsync(key: TransitKey, v: KeyVersion, input: Buffer, opts: PqSignOptions): Promise<Buffer> {
  if (key.type === 'ml-dsa' && !opts.prehashed && v.key?.length === 32 && nodeMlDsaAvailable()) {
    return nodeMlDsaSign(key.parameterSet as MlDsaSet, v.key, input);
  }
  return pqSign(key, v, input, opts);
}

function publicOf(key: TransitKey, v: KeyVersion): Uint8Array {
  return key.type === 'slh-dsa' ? slhPair(key, v).publicKey : mlDsaPair(key, v).publicKey;
}

/** Verify on the calling thread; a wrong or malformed signature is false. */
export function pqVerify(key: TransitKey, v: KeyVersion, input: Buffer, sig: Buffer, opts: PqSignOptions): boolean {
  const pub = publicOf(key, v);
  if (key.type === 'hybrid') {
    if (!v.publicKey) throw invalid('no such key version');
    return compositeVerify(key.parameterSet as MlDsaSet, key.hybridEc!, pub, v.publicKey, input, sig);
  }
  const alg = key.type === 'ml-dsa' ? mlDsa(key.parameterSet) : slhDsa(key.parameterSet);
  const m = opts.prehashed ? prehashMessage(opts.hash, input, strength(key)) : undefined;
  try {
    return m ? alg.internal.verify(sig, m, pub) : alg.verify(sig, input, pub);
  } catch {
    return false;
  }
}

/** As pqVerify; pure ML-DSA goes to node:crypto's thread pool when available. */
export async function pqVerifyAsync(key: TransitKey, v: KeyVersion, input: Buffer, sig: Buffer, opts: PqSignOptions): Promise<boolean> {
  if (key.type === 'ml-dsa' && !opts.prehashed && nodeMlDsaAvailable()) {
    return nodeMlDsaVerify(key.parameterSet as MlDsaSet, mlDsaPair(key, v).publicKey, input, sig);
  }
  return pqVerify(key, v, input, sig, opts);
}
