/**
 * `derivedkeys/:type/:name` (Vault 2.x Enterprise): keys for the indexes [key_index_from, key_index_to)
 * derived from the HMAC key of one version of the named key, each also wrapped by that version as
 * `datakey` wraps a key. Vault documents the endpoint but not its derivation, so keyhold's is its own
 * and stated here: key i = HKDF-SHA-256(ikm = the version's HMAC key, salt = UTF-8 `salt`,
 * info = UTF-8 `info` ‖ uint64 big-endian i, length = bits/8). The same request always gives the same
 * keys (the ciphertexts differ: fresh nonces).
 */
import { hkdfSync } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import type { TransitState } from '../keyring/types.js';
import { encryptWithKey } from './encryption.js';
import { encryptionVersion, liveVersion } from './key-versions.js';
import { withKey } from './operations.js';

/** Most keys one request may derive (keyhold's bound, as datakeys). */
export const MAX_DERIVED_KEYS = 1000;

/** Options of a derivedkeys request. */
export interface DerivedKeysOptions {
  salt: string;
  info: string;
  from: number;
  to: number;
  bits: number;
  keyVersion: number;
  context?: Buffer;
  includePlaintext: boolean;
}

/** Key `index` of a version's HMAC key (exported for tests and clients that re-derive). */
export function deriveIndexed(hmacKey: Buffer, salt: string, info: string, index: number, bytes: number): Buffer {
  const idx = Buffer.alloc(8);
  idx.writeBigUInt64BE(BigInt(index));
  return Buffer.from(
    hkdfSync('sha256', hmacKey, Buffer.from(salt, 'utf8'), Buffer.concat([Buffer.from(info, 'utf8'), idx]), bytes),
  );
}

/** derivedkeys: `{ "<index>": {plaintext?, ciphertext}, ..., key_version }`. */
export async function runDerivedKeys(
  state: TransitState,
  name: string,
  o: DerivedKeysOptions,
): Promise<Record<string, unknown>> {
  if (!o.salt) throw invalid('salt', 'salt is required');
  if (!Number.isSafeInteger(o.from) || o.from < 0)
    throw invalid('key_index_from', 'key_index_from must be a non-negative integer');
  if (!Number.isSafeInteger(o.to) || o.to <= o.from)
    throw invalid('key_index_to', 'key_index_to must be greater than key_index_from (it is exclusive)');
  if (o.to - o.from > MAX_DERIVED_KEYS) throw invalid('key_index_to', `at most ${MAX_DERIVED_KEYS} keys per request`);
  if (o.bits !== 128 && o.bits !== 256 && o.bits !== 512) throw invalid('bits', 'invalid bit length');
  return withKey(state, name, 'encryption key not found', async (key) => {
    if (key.type === 'managed_key')
      throw invalid(
        'name',
        'derivedkeys is not supported for keys of type managed_key (their HMAC keys stay in the HSM or KMS)',
      );
    const version = encryptionVersion(key, o.keyVersion);
    const hmacKey = liveVersion(key, version).hmacKey;
    const out: Record<string, unknown> = {};
    for (let i = o.from; i < o.to; i++) {
      const dk = deriveIndexed(hmacKey, o.salt, o.info, i, o.bits / 8);
      const r = encryptWithKey(key, dk, { keyVersion: version, context: o.context });
      out[String(i)] = o.includePlaintext
        ? { plaintext: dk.toString('base64'), ciphertext: r.ciphertext }
        : { ciphertext: r.ciphertext };
      dk.fill(0);
    }
    out.key_version = version;
    return out;
  });
}
