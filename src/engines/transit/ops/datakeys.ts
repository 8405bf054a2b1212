/**
 * `datakeys/:type/:name` (Vault Enterprise): `count` fresh data keys wrapped by one key version in one
 * call, answered as `key_pairs` (each with `ciphertext`, and `plaintext` on the plaintext path) and
 * the `key_version` used. Every key is wrapped exactly as `datakey` wraps one.
 */
import { randomBytes } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import type { TransitState } from '../keyring/types.js';
import { encryptWithKey } from './encryption.js';
import { encryptionVersion } from './key-versions.js';
import { managedEncrypt } from './managed-ops.js';
import { withKey, type DatakeyOptions } from './operations.js';

/** Most data keys one request may ask for (keyhold's bound; the reply stays well under the body limits). */
export const MAX_DATAKEYS = 1000;

/** datakeys: `count` data keys under one version (the latest unless `keyVersion`). */
export async function runDatakeys(
  state: TransitState,
  name: string,
  count: number,
  o: DatakeyOptions,
): Promise<Record<string, unknown>> {
  if (!Number.isInteger(count) || count < 1 || count > MAX_DATAKEYS)
    throw invalid('count', `count must be between 1 and ${MAX_DATAKEYS}, got ${count}`);
  if (o.bits !== 128 && o.bits !== 256 && o.bits !== 512) throw invalid('bits', 'invalid bit length');
  return withKey(state, name, 'encryption key not found', async (key) => {
    const version =
      key.type === 'managed_key' ? o.keyVersion || key.latestVersion : encryptionVersion(key, o.keyVersion);
    const pairs: Record<string, string>[] = [];
    for (let i = 0; i < count; i++) {
      const dk = randomBytes(o.bits / 8);
      const r =
        key.type === 'managed_key'
          ? await managedEncrypt(state, key, dk, { keyVersion: version, nonce: o.nonce })
          : encryptWithKey(key, dk, { keyVersion: version, context: o.context, nonce: o.nonce, padding: o.padding });
      pairs.push(
        o.includePlaintext
          ? { plaintext: dk.toString('base64'), ciphertext: r.ciphertext }
          : { ciphertext: r.ciphertext },
      );
      dk.fill(0);
    }
    return { key_pairs: pairs, key_version: version };
  });
}
