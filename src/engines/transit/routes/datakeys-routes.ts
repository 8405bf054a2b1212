/** Vault Enterprise's batch and derived data keys: `datakeys/:plaintext/:name`, `derivedkeys/:plaintext/:name`. */
import { invalid } from '../../../framework/errors.js';
import { decodeBase64, f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import type { TransitState } from '../keyring/types.js';
import { MAX_DATAKEYS, runDatakeys } from '../ops/datakeys.js';
import { MAX_DERIVED_KEYS, runDerivedKeys } from '../ops/derivedkeys.js';

const route = routesFor<TransitState>();

function b64(field: string, value: string | undefined): Buffer | undefined {
  if (!value) return undefined;
  try {
    return decodeBase64(field, value);
  } catch {
    throw invalid(field, `failed to base64-decode ${field}`);
  }
}

/** Routes: datakeys. */
export const datakeysRoutes: AnyRoute[] = [
  route({
    path: 'datakeys/:plaintext/:name',
    standby: 'serve',
    summary: `Generate up to ${MAX_DATAKEYS} data keys in one call: wrapped only, or wrapped and in plaintext`,
    fields: {
      name: f.name('Name of the key'),
      plaintext: f.string('"plaintext" (return the keys too) or "wrapped" (ciphertexts only)').required(),
      count: f.int(`Number of data keys (1-${MAX_DATAKEYS})`).required(),
      context: f.string('Key-derivation context, base64 (required for derived keys; the same for every key)'),
      nonce: f.string('Nonce, base64, only for convergent keys from Vault 0.6.1'),
      bits: f.int('Data key size in bits: 128, 256 (default) or 512').default(256),
      key_version: f.int('Key version to wrap with; 0 means latest').default(0),
      padding_scheme: f.string('RSA keys: oaep (default) or pkcs1v15'),
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.plaintext !== 'plaintext' && data.plaintext !== 'wrapped')
          throw invalid("Invalid path, must be 'plaintext' or 'wrapped'");
        const out = await runDatakeys(engine, data.name, data.count, {
          bits: data.bits,
          context: b64('context', data.context),
          nonce: b64('nonce', data.nonce),
          keyVersion: data.key_version,
          padding: data.padding_scheme,
          includePlaintext: data.plaintext === 'plaintext',
        });
        return { data: out };
      },
    },
  }),
  route({
    path: 'derivedkeys/:plaintext/:name',
    standby: 'serve',
    summary: `Derive keys for an index range (at most ${MAX_DERIVED_KEYS}) from the key's HMAC key, wrapped, optionally in plaintext`,
    fields: {
      name: f.name('Name of the key'),
      plaintext: f.string('"plaintext" (return the keys too) or "wrapped" (ciphertexts only)').required(),
      salt: f.string('Salt of the derivation (text)').required(),
      key_index_from: f.int('First index').required(),
      key_index_to: f.int('End of the index range (exclusive)').required(),
      info: f.string('Info of the derivation (text)').default(''),
      context: f.string('Key-derivation context of the wrapping key, base64 (required for derived keys)'),
      bits: f.int('Key size in bits: 128, 256 (default) or 512').default(256),
      key_version: f.int('Version whose HMAC key derives and which wraps; 0 means latest').default(0),
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.plaintext !== 'plaintext' && data.plaintext !== 'wrapped')
          throw invalid("Invalid path, must be 'plaintext' or 'wrapped'");
        const out = await runDerivedKeys(engine, data.name, {
          salt: data.salt,
          info: data.info,
          from: data.key_index_from,
          to: data.key_index_to,
          bits: data.bits,
          keyVersion: data.key_version,
          context: b64('context', data.context),
          includePlaintext: data.plaintext === 'plaintext',
        });
        return { data: out };
      },
    },
  }),
];
