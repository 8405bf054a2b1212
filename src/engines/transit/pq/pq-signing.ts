/**
 * Sign and verify with the post-quantum key types. The input is signed itself (pure ML-DSA / SLH-DSA,
 * empty context) unless `prehashed=true`, which makes it HashML-DSA / HashSLH-DSA over the caller's
 * `hash_algorithm` digest. `hybrid` keys make composite signatures (composite.ts) and sign the input
 * only. Requests run off the event loop: pure ML-DSA on node:crypto's thread pool where the Node has
 * ML-DSA (node-ml-dsa.ts), everything else on @noble/post-quantum in worker threads (pq-pool.ts); the
 * synchronous pqSign/pqVerify are the same operations on the calling thread.
 */
import { invalid } from '../../../framework/errors.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';
import {
  classicalSignAsync,
  classicalVerifyAsync,
  compositeMessage,
  compositeSign,
  compositeSuite,
  compositeVerify,
} from './composite.js';
import { poolSign, poolVerify, type PqJob } from './pq-pool.js';
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
  if (key.type === 'hybrid' && opts.prehashed)
    throw invalid(
      'prehashed',
      'hybrid keys sign the input itself (the composite construction pre-hashes it); prehashed must be false',
    );
}

function strength(key: TransitKey): number {
  return key.type === 'slh-dsa'
    ? slhStrength(key.parameterSet as SlhDsaSet)
    : ML_DSA_STRENGTH[key.parameterSet as MlDsaSet];
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

/** The pool job of a non-hybrid signature: pure, or the pre-hash M' on the internal interface. */
function job(key: TransitKey, input: Buffer, opts: PqSignOptions, k: Uint8Array): Omit<PqJob, 'op' | 'sig'> {
  const family = key.type === 'slh-dsa' ? 'slh-dsa' : 'ml-dsa';
  if (!opts.prehashed) return { family, set: key.parameterSet!, internal: false, key: k, msg: input };
  return {
    family,
    set: key.parameterSet!,
    internal: true,
    key: k,
    msg: prehashMessage(opts.hash, input, strength(key)),
  };
}

/**
 * As pqSign, off the event loop: pure ML-DSA on node:crypto's thread pool when the Node has it, the
 * rest on the worker pool of pq-pool.ts (the classical half of a hybrid on node's thread pool).
 */
export async function pqSignAsync(key: TransitKey, v: KeyVersion, input: Buffer, opts: PqSignOptions): Promise<Buffer> {
  if (key.type === 'ml-dsa' && !opts.prehashed && v.key?.length === 32 && nodeMlDsaAvailable()) {
    return nodeMlDsaSign(key.parameterSet as MlDsaSet, v.key, input);
  }
  if (key.type === 'hybrid') {
    if (!v.privateKey) throw invalid('requested version for signing does not contain a private part');
    const set = key.parameterSet as MlDsaSet;
    const m = compositeMessage(set, key.hybridEc!, input);
    const pq = poolSign({
      family: 'ml-dsa',
      set,
      internal: false,
      key: mlDsaPair(key, v).secretKey,
      msg: m,
      context: compositeSuite(set, key.hybridEc!).label,
    });
    if (!pq) return pqSign(key, v, input, opts);
    const [a, b] = await Promise.all([pq, classicalSignAsync(key.hybridEc!, v.privateKey, m)]);
    return Buffer.concat([a, b]);
  }
  const sk = key.type === 'slh-dsa' ? slhPair(key, v).secretKey : mlDsaPair(key, v).secretKey;
  return (await poolSign(job(key, input, opts, sk))) ?? pqSign(key, v, input, opts);
}

/** As pqVerify, off the event loop (node:crypto for pure ML-DSA where it has it, else the worker pool). */
export async function pqVerifyAsync(
  key: TransitKey,
  v: KeyVersion,
  input: Buffer,
  sig: Buffer,
  opts: PqSignOptions,
): Promise<boolean> {
  if (key.type === 'ml-dsa' && !opts.prehashed && nodeMlDsaAvailable()) {
    return nodeMlDsaVerify(key.parameterSet as MlDsaSet, mlDsaPair(key, v).publicKey, input, sig);
  }
  if (key.type === 'hybrid') {
    if (!v.publicKey) throw invalid('no such key version');
    const set = key.parameterSet as MlDsaSet;
    const n = mlDsa(set).lengths.signature!;
    if (sig.length <= n) return false;
    const m = compositeMessage(set, key.hybridEc!, input);
    const pq = poolVerify({
      family: 'ml-dsa',
      set,
      internal: false,
      key: mlDsaPair(key, v).publicKey,
      msg: m,
      sig: sig.subarray(0, n),
      context: compositeSuite(set, key.hybridEc!).label,
    });
    if (!pq) return pqVerify(key, v, input, sig, opts);
    const [a, b] = await Promise.all([pq, classicalVerifyAsync(key.hybridEc!, v.publicKey, m, sig.subarray(n))]);
    return a && b;
  }
  const pub = publicOf(key, v);
  const j = job(key, input, opts, pub);
  return (await poolVerify({ ...j, sig })) ?? pqVerify(key, v, input, sig, opts);
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
