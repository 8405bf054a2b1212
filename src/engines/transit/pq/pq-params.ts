/**
 * Parameter sets of the post-quantum key types on Vault Enterprise's fields: `ml-dsa` with
 * `parameter_set` 44/65/87 (FIPS 204), `slh-dsa` with the twelve FIPS 205 names, `hybrid` with
 * `parameter_set` (its ML-DSA half), `hybrid_key_type_pqc` (ml-dsa) and `hybrid_key_type_ec`.
 * The implementations are @noble/post-quantum's (node:crypto's ML-DSA where the running Node has it,
 * see node-ml-dsa.ts).
 */
import { ml_dsa44, ml_dsa65, ml_dsa87 } from '@noble/post-quantum/ml-dsa.js';
import * as slh from '@noble/post-quantum/slh-dsa.js';
import { invalid } from '../../../framework/errors.js';
import type { HybridEcType, KeyTypeName } from '../keyring/types.js';

/** ML-DSA parameter sets by Vault's names. */
export const ML_DSA = { '44': ml_dsa44, '65': ml_dsa65, '87': ml_dsa87 } as const;
export type MlDsaSet = keyof typeof ML_DSA;

/** Collision strength (bits) a HashML-DSA / HashSLH-DSA pre-hash must offer for each set. */
export const ML_DSA_STRENGTH: Record<MlDsaSet, number> = { '44': 128, '65': 192, '87': 256 };

/** SLH-DSA parameter sets by Vault's names (FIPS 205 table 2), with their security strength n*8. */
export const SLH_DSA = {
  'slh-dsa-sha2-128s': slh.slh_dsa_sha2_128s,
  'slh-dsa-shake-128s': slh.slh_dsa_shake_128s,
  'slh-dsa-sha2-128f': slh.slh_dsa_sha2_128f,
  'slh-dsa-shake-128f': slh.slh_dsa_shake_128f,
  'slh-dsa-sha2-192s': slh.slh_dsa_sha2_192s,
  'slh-dsa-shake-192s': slh.slh_dsa_shake_192s,
  'slh-dsa-sha2-192f': slh.slh_dsa_sha2_192f,
  'slh-dsa-shake-192f': slh.slh_dsa_shake_192f,
  'slh-dsa-sha2-256s': slh.slh_dsa_sha2_256s,
  'slh-dsa-shake-256s': slh.slh_dsa_shake_256s,
  'slh-dsa-sha2-256f': slh.slh_dsa_sha2_256f,
  'slh-dsa-shake-256f': slh.slh_dsa_shake_256f,
} as const;
export type SlhDsaSet = keyof typeof SLH_DSA;

/** Security strength (bits) of an SLH-DSA set: 128, 192 or 256 from its name. */
export function slhStrength(set: SlhDsaSet): number {
  return Number(/-(128|192|256)[sf]$/.exec(set)![1]);
}

/** The classical types a hybrid key may pair with ML-DSA. */
export const HYBRID_EC_TYPES: readonly HybridEcType[] = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519'];

/** What a post-quantum key needs besides its type. */
export interface PqConfig {
  parameterSet: string;
  hybridEc?: HybridEcType;
}

/** Is `type` one of the post-quantum key types? */
export function isPqType(type: KeyTypeName): type is 'ml-dsa' | 'slh-dsa' | 'hybrid' {
  return type === 'ml-dsa' || type === 'slh-dsa' || type === 'hybrid';
}

/**
 * Validate the post-quantum fields of a create or import request; 400s name the field and keep
 * Vault's wording ("invalid parameter set 12 for key type ml-dsa", "invalid config for hybrid key: ...").
 * Other key types must not carry them.
 */
export function parsePqConfig(
  type: KeyTypeName,
  raw: { parameterSet?: string; pqc?: string; ec?: string },
): PqConfig | undefined {
  const set = (raw.parameterSet ?? '').trim().toLowerCase();
  if (!isPqType(type)) {
    if (set) throw invalid('parameter_set', `parameter_set is not valid for key type ${type}`);
    if (raw.pqc || raw.ec)
      throw invalid(
        'hybrid_key_type_ec',
        `hybrid_key_type_pqc and hybrid_key_type_ec are only valid for key type hybrid`,
      );
    return undefined;
  }
  if (type === 'ml-dsa') {
    if (!(set in ML_DSA))
      throw invalid(
        'parameter_set',
        `invalid parameter set ${raw.parameterSet ?? ''} for key type ml-dsa (one of 44, 65, 87)`,
      );
    return { parameterSet: set };
  }
  if (type === 'slh-dsa') {
    if (!(set in SLH_DSA))
      throw invalid(
        'parameter_set',
        `invalid parameter set ${raw.parameterSet ?? ''} for key type slh-dsa (one of ${Object.keys(SLH_DSA).join(', ')})`,
      );
    return { parameterSet: set };
  }
  const pqc = (raw.pqc ?? '').trim().toLowerCase();
  const ec = (raw.ec ?? '').trim().toLowerCase();
  if (pqc !== 'ml-dsa')
    throw invalid(
      'hybrid_key_type_pqc',
      `invalid config for hybrid key: unsupported PQC key type "${raw.pqc ?? ''}" (ml-dsa)`,
    );
  if (!(set in ML_DSA))
    throw invalid(
      'parameter_set',
      `invalid config for hybrid key: invalid parameter set ${raw.parameterSet ?? ''} for ml-dsa (one of 44, 65, 87)`,
    );
  if (!HYBRID_EC_TYPES.includes(ec as HybridEcType)) {
    throw invalid(
      'hybrid_key_type_ec',
      `invalid config for hybrid key: unsupported EC key type "${raw.ec ?? ''}" (one of ${HYBRID_EC_TYPES.join(', ')})`,
    );
  }
  return { parameterSet: set, hybridEc: ec as HybridEcType };
}

/** The ML-DSA implementation of a set (throws on a stored key with a bad set: a corrupted policy). */
export function mlDsa(set: string | undefined): (typeof ML_DSA)[MlDsaSet] {
  const alg = ML_DSA[set as MlDsaSet];
  if (!alg) throw invalid(`key has an invalid ML-DSA parameter set ${String(set)}`);
  return alg;
}

/** The SLH-DSA implementation of a set. */
export function slhDsa(set: string | undefined): (typeof SLH_DSA)[SlhDsaSet] {
  const alg = SLH_DSA[set as SlhDsaSet];
  if (!alg) throw invalid(`key has an invalid SLH-DSA parameter set ${String(set)}`);
  return alg;
}
