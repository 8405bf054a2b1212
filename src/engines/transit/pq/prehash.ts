/**
 * The pre-hash message M' of HashML-DSA (FIPS 204 Algorithm 4) and HashSLH-DSA (FIPS 205 Algorithm 23),
 * the same in both: 0x01 ‖ len(ctx) ‖ ctx ‖ DER(OID of the hash) ‖ digest. keyhold signs a digest the
 * caller made (`prehashed=true`) with Vault's hash names; pure signing (the default) needs none of this.
 */
import { invalid } from '../../../framework/errors.js';

/** Hashes allowed for a pre-hash, with their OID (DER) and size; `strength` is the collision strength in bits. */
const PREHASH: Record<string, { oid: string; size: number; strength: number }> = {
  'sha2-256': { oid: '0609608648016503040201', size: 32, strength: 128 },
  'sha2-384': { oid: '0609608648016503040202', size: 48, strength: 192 },
  'sha2-512': { oid: '0609608648016503040203', size: 64, strength: 256 },
  'sha3-256': { oid: '0609608648016503040208', size: 32, strength: 128 },
  'sha3-384': { oid: '0609608648016503040209', size: 48, strength: 192 },
  'sha3-512': { oid: '060960864801650304020a', size: 64, strength: 256 },
};

/**
 * M' for a caller-made digest. The hash must offer at least `strength` bits of collision resistance
 * (FIPS 204 section 5.4 / FIPS 205 section 10.2.2 ask for it), so SHA-224 and SHA-1 are refused.
 */
export function prehashMessage(
  hash: string,
  digest: Uint8Array,
  strength: number,
  ctx: Uint8Array = new Uint8Array(0),
): Buffer {
  const ph = PREHASH[hash];
  if (!ph)
    throw invalid(
      'hash_algorithm',
      `hash algorithm ${hash} is not supported for prehashed post-quantum signatures (one of ${Object.keys(PREHASH).join(', ')})`,
    );
  if (ph.strength < strength)
    throw invalid(
      'hash_algorithm',
      `hash algorithm ${hash} is too weak for this parameter set (needs ${strength}-bit collision strength)`,
    );
  if (digest.length !== ph.size)
    throw invalid('input', `a prehashed ${hash} digest must be ${ph.size} bytes, got ${digest.length}`);
  return Buffer.concat([Buffer.from([1, ctx.length]), ctx, Buffer.from(ph.oid, 'hex'), digest]);
}
