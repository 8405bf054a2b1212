/**
 * OpenBao's `derive-key/:name`: ECDH between an ECDSA key of this mount (`base_key_name`) and a peer's
 * public key makes a new AEAD key `name`. The shared secret never leaves keyhold; the new key is an
 * ordinary transit key (not exportable, marked imported, version 1).
 */
import { randomBytes } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { f } from '../../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import { keyExists } from '../keyring/key-store.js';
import { checkKeyName, newKeyConfig, parseKeyType } from '../keyring/key-rules.js';
import { HMAC_KEY_BYTES, LoadedVersion } from '../keyring/material.js';
import { refuseSoftDeleted } from '../keyring/soft-delete.js';
import { DERIVED_KEY_TYPES, ecdhDerive } from '../ops/ecdh-derive.js';
import type { TransitEngine } from '../transit-engine.js';

const route = routesFor<TransitEngine>();

/** Route: derive-key/:name. */
export const deriveKeyRoutes: AnyRoute[] = [
  route({
    path: 'derive-key/:name',
    summary: 'Derive a new key by ECDH between an ECDSA key of this mount and a peer public key (OpenBao)',
    fields: {
      name: f.name('Name of the derived key to create'),
      key_derivation_algorithm: f.string('Key derivation algorithm: ecdh (the only one)').default('ecdh'),
      peer_public_key: f.string("PEM public key of the other party, on the base key's curve"),
      base_key_name: f.string('ECDSA key (P-256, P-384, P-521) of this mount whose private key takes part'),
      base_key_version: f.int('Version of the base key; 0 = latest').default(0),
      derived_key_type: f
        .string('Type of the derived key: aes256-gcm96 (default), aes128-gcm96, chacha20-poly1305, xchacha20-poly1305')
        .default('aes256-gcm96'),
    },
    operations: {
      update: async ({ engine, data }) => {
        checkKeyName(data.name);
        if (data.key_derivation_algorithm !== 'ecdh')
          throw invalid(
            'key_derivation_algorithm',
            `key derivation algorithm ${data.key_derivation_algorithm} not supported`,
          );
        if (!data.peer_public_key) throw invalid('peer_public_key', 'peer public key not provided');
        if (!data.base_key_name) throw invalid('base_key_name', 'base_key_name is required');
        const type = parseKeyType(data.derived_key_type, 'derived_key_type');
        if (!DERIVED_KEY_TYPES.includes(type))
          throw invalid('derived_key_type', `unknown key type ${data.derived_key_type}`);
        const material = await engine.keys.withLock(data.base_key_name, 'shared', async () => {
          const base = await engine.keys.get(data.base_key_name!);
          if (!base) throw invalid('base_key_name', 'specified base key not found');
          refuseSoftDeleted(base);
          return ecdhDerive(base, data.base_key_version, data.peer_public_key!, type);
        });
        await engine.keys.withLock(data.name, 'exclusive', async () => {
          const key = newKeyConfig(data.name, { type });
          key.importedKey = true;
          key.latestVersion = 1;
          key.versions.set(
            1,
            new LoadedVersion({
              version: 1,
              creationTime: engine.keys.nowSeconds(),
              key: material,
              hmacKey: randomBytes(HMAC_KEY_BYTES),
            }),
          );
          await engine.keys.putWholeLocked(key, false, keyExists);
        });
      },
    },
  }),
];
