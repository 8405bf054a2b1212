/**
 * Key-management routes of the transit engine (spec 2.1-2.4, 4.1; reference transit-wire.md 3.1):
 * create/read/list/delete, config, rotate, trim, config/keys and cache-config. Import, export,
 * backup/restore, BYOK and certificates live in key-io-routes.ts and are part of `keyRoutes`.
 */
import { parsePqConfig } from '../pq/pq-params.js';
import { f } from '../../../framework/fields.js';
import { invalid } from '../../../framework/errors.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import type { TransitEngine } from '../transit-engine.js';
import { applyConfig, checkKeyName, checkTrim, parseKeyType } from '../keyring/key-rules.js';
import { keyView } from '../keyring/key-view.js';
import { refuseSoftDeleted } from '../keyring/soft-delete.js';
import { managedKeyId, managedView, releaseManaged } from './managed-key-support.js';
import { keyIoRoutes } from './key-io-routes.js';

const route = routesFor<TransitEngine>();

const keyName = f.name('Name of the key');

/** Smallest non-zero cache size (spec 2.4). */
const MIN_CACHE_SIZE = 10;

/** Routes: keys CRUD, config, rotate, trim, config/keys, cache-config, and the import/export group. */
export const keyRoutes: AnyRoute[] = [
  route({
    path: 'keys',
    summary: 'List key names',
    fields: {},
    operations: {
      list: async ({ engine }) => {
        const keys = await engine.keys.list();
        return keys.length ? { data: { keys } } : undefined;
      },
    },
    cli: { command: 'transit keys list', examples: ['keyhold transit keys list'] },
  }),
  route({
    path: 'keys/:name',
    summary: 'Create a named key (an existing key is left unchanged); GET reads it, DELETE deletes it',
    fields: {
      name: keyName,
      type: f
        .string(
          'Key type: aes256-gcm96 (default), aes128-gcm96, chacha20-poly1305, xchacha20-poly1305, ed25519, ecdsa-p256/p384/p521, rsa-2048/3072/4096, hmac, aes128/192/256-cmac, ml-dsa, slh-dsa, hybrid',
        )
        .default('aes256-gcm96'),
      derived: f.bool('Derive a key per request from a context').default(false),
      convergent_encryption: f
        .bool('Same plaintext and context give the same ciphertext (needs derived)')
        .default(false),
      exportable: f.bool('Allow exporting the key material (cannot be undone)').default(false),
      allow_plaintext_backup: f.bool('Allow plaintext backups (cannot be undone)').default(false),
      key_size: f.int('Key size in bytes, hmac keys only (32-512, default 32)').default(0),
      auto_rotate_period: f.duration('Rotate automatically after this period (0 = never, else at least 1h)').default(0),
      managed_key_name: f.string('Managed key name (type managed_key)'),
      managed_key_id: f.string('Managed key id (type managed_key)'),
      managed_key: f.string('Alias of managed_key_name (keyhold; the CLI flag --managed-key)'),
      parameter_set: f.string('ml-dsa and hybrid: 44, 65 or 87; slh-dsa: slh-dsa-sha2-128s ... slh-dsa-shake-256f'),
      hybrid_key_type_pqc: f.string('hybrid: the post-quantum half (ml-dsa)'),
      hybrid_key_type_ec: f.string('hybrid: the classical half (ecdsa-p256, ecdsa-p384, ecdsa-p521 or ed25519)'),
      context: f.base64('Read only: base64 context to show derived Ed25519 public keys'),
    },
    operations: {
      update: async ({ engine, data }) => {
        checkKeyName(data.name);
        const type = parseKeyType(data.type);
        const managed = type === 'managed_key' ? await managedKeyId(engine, data) : undefined;
        const pq = parsePqConfig(type, {
          parameterSet: data.parameter_set,
          pqc: data.hybrid_key_type_pqc,
          ec: data.hybrid_key_type_ec,
        });
        const { key, created } = await engine.keys.create(data.name, {
          ...pq,
          type,
          derived: data.derived,
          convergentEncryption: data.convergent_encryption,
          exportable: data.exportable,
          allowPlaintextBackup: data.allow_plaintext_backup,
          keySize: data.key_size,
          autoRotatePeriod: data.auto_rotate_period,
          managedKeyId: managed,
        });
        if (created && managed) await engine.managed!.markUsed(managed, data.name);
        const view = key.type === 'managed_key' ? await managedView(engine, key) : keyView(key);
        return { data: view, warnings: created ? undefined : [`key ${data.name} already existed`] };
      },
      read: async ({ engine, data }) => {
        const key = await engine.keys.get(data.name);
        if (key?.type === 'managed_key') return { data: await managedView(engine, key) };
        return key ? { data: keyView(key, data.context) } : undefined;
      },
      delete: async ({ engine, data }) => {
        await engine.keys.withLock(data.name, 'exclusive', async () => {
          const key = await engine.keys.get(data.name);
          if (!key) throw invalid(`error deleting policy ${data.name}: could not delete key; not found`);
          if (!key.deletionAllowed)
            throw invalid(
              'deletion_allowed',
              `error deleting policy ${data.name}: deletion is not allowed for this key`,
            );
          await engine.keys.deleteLocked(key);
          if (key.type === 'managed_key') await releaseManaged(engine, key);
        });
      },
    },
    cli: {
      command: 'transit keys create',
      args: ['name'],
      operation: 'update',
      examples: [
        'keyhold transit keys create payments',
        'keyhold transit keys create signer --type ed25519',
        'keyhold transit keys create mac --type hmac --key-size 64',
      ],
    },
  }),
  route({
    path: 'keys/:name/config',
    summary:
      'Tune a key: minimum versions, deletion, export and backup flags, auto-rotation, sha1 refusal, public JWKS',
    fields: {
      name: keyName,
      min_decryption_version: f.int('Oldest version that may decrypt/verify'),
      min_encryption_version: f.int('Oldest version that may encrypt/sign (0 = latest)'),
      deletion_allowed: f.bool('Allow deleting the key'),
      exportable: f.bool('Allow export (one-way)'),
      allow_plaintext_backup: f.bool('Allow plaintext backup (one-way)'),
      auto_rotate_period: f.duration('Auto-rotation period (0 = off, else at least 1h); omitted = unchanged'),
      disallow_sha1: f.bool('Refuse sha1 for sign and verify with this key (keyhold extension)'),
      public_jwks: f.bool('Serve jwks/NAME without a token, for relying parties (keyhold extension)'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const { key, result } = await engine.keys.update(
          data.name,
          () => invalid(`no existing key named ${data.name} could be found`),
          (draft) => {
            refuseSoftDeleted(draft);
            return applyConfig(draft, {
              minDecryptionVersion: data.min_decryption_version,
              minEncryptionVersion: data.min_encryption_version,
              deletionAllowed: data.deletion_allowed,
              exportable: data.exportable,
              allowPlaintextBackup: data.allow_plaintext_backup,
              autoRotatePeriod: data.auto_rotate_period,
              disallowSha1: data.disallow_sha1,
              publicJwks: data.public_jwks,
            });
          },
        );
        return { data: keyView(key), warnings: result.length ? result : undefined };
      },
    },
    cli: {
      command: 'transit keys config',
      args: ['name'],
      examples: [
        'keyhold transit keys config payments --deletion-allowed true',
        'keyhold transit keys config payments --min-decryption-version 3',
        'keyhold transit keys config signer --disallow-sha1 true',
        'keyhold transit keys config issuer --public-jwks true',
      ],
    },
  }),
  route({
    path: 'keys/:name/rotate',
    summary: 'Add a new latest version of the key',
    fields: {
      name: keyName,
      managed_key_name: f.string('Managed key name (type managed_key)'),
      managed_key_id: f.string('Managed key id (type managed_key)'),
      managed_key: f.string('Alias of managed_key_name (keyhold; the CLI flag --managed-key)'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const current = await engine.keys.get(data.name);
        const managed = current?.type === 'managed_key' ? await managedKeyId(engine, data) : undefined;
        const key = await engine.keys.rotate(
          data.name,
          () => invalid('key not found'),
          (msg) => invalid('allow_rotation', msg),
          managed,
        );
        if (managed) {
          await engine.managed!.markUsed(managed, data.name);
          return { data: await managedView(engine, key) };
        }
        return { data: keyView(key) };
      },
    },
    cli: { command: 'transit keys rotate', args: ['name'], examples: ['keyhold transit keys rotate payments'] },
  }),
  route({
    path: 'keys/:name/trim',
    summary: 'Permanently delete versions below min_available_version',
    fields: {
      name: keyName,
      min_available_version: f.int('Versions below this are deleted for good').required(),
    },
    operations: {
      update: async ({ engine, data }) => {
        const key = await engine.keys.withLock(data.name, 'exclusive', async () => {
          const k = await engine.keys.get(data.name);
          if (!k) throw invalid('invalid key name');
          refuseSoftDeleted(k);
          checkTrim(k, data.min_available_version);
          await engine.keys.trimLocked(k, data.min_available_version);
          return k;
        });
        return { data: keyView(key) };
      },
    },
    cli: {
      command: 'transit keys trim',
      args: ['name'],
      confirm: true,
      examples: ['keyhold transit keys trim payments --min-available-version 3'],
    },
  }),
  route({
    path: 'config/keys',
    summary: 'Mount-wide key settings: disable_upsert stops encrypt from creating keys',
    fields: { disable_upsert: f.bool('Encrypt no longer creates missing keys') },
    operations: {
      read: async ({ engine }) => ({ data: { disable_upsert: await engine.upsertDisabled() } }),
      update: async ({ engine, data }) => {
        const current = await engine.upsertDisabled();
        const next = data.disable_upsert ?? current;
        await engine.keys.writeConfig('keys', { disable_upsert: next });
        return { data: { disable_upsert: next } };
      },
    },
    cli: {
      command: 'transit config-keys',
      operation: 'update',
      examples: ['keyhold transit config-keys --disable-upsert true'],
    },
  }),
  route({
    path: 'cache-config',
    summary:
      'Size of the cache of loaded keys (0 = unbounded, else >= 10, LRU); applied on plugin reload and at start-up',
    fields: { size: f.int('Cache entries (0 = unbounded, else at least 10)').default(0) },
    operations: {
      read: async ({ engine }) => ({
        data: { size: (await engine.keys.readConfig<{ size: number }>('cache'))?.size ?? 0 },
      }),
      update: async ({ engine, data }) => {
        if (data.size < 0 || (data.size > 0 && data.size < MIN_CACHE_SIZE)) {
          throw invalid('size', `size must be 0 or a value greater or equal to ${MIN_CACHE_SIZE}`);
        }
        await engine.keys.writeConfig('cache', { size: data.size });
        return {
          data: { size: data.size },
          warnings:
            engine.keys.cacheInfo().size === data.size
              ? undefined
              : ['cache size takes effect after sys/plugins/reload/backend for this mount (or a restart)'],
        };
      },
    },
    cli: {
      command: 'transit cache-config',
      operation: 'update',
      examples: ['keyhold transit cache-config --size 500'],
    },
  }),
  ...keyIoRoutes,
];
