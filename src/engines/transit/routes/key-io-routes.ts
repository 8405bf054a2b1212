/**
 * Key material in and out of the transit engine (spec 4.1; reference transit-wire.md 3.2.10, 3.3, 5, 6):
 * export, backup/restore, the BYOK wrapping key, import, import_version, byok-export, csr and
 * set-certificate. Handlers are thin: formats and rules live in keyring/.
 */
import { parsePqConfig, type PqConfig } from '../pq/pq-params.js';
import { pqFromImport } from '../pq/pq-material.js';
import { refuseSoftDeleted } from '../keyring/soft-delete.js';
import { createPublicKey, randomBytes, type KeyObject } from 'node:crypto';
import { f, decodeBase64 } from '../../../framework/fields.js';
import { invalid, notFound } from '../../../framework/errors.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import type { TransitEngine } from '../transit-engine.js';
import { decodeBackup, encodeBackup } from '../keyring/backup-format.js';
import {
  exportMaterial,
  importHash,
  parseImportedMaterial,
  parseImportedPublicKey,
  unwrapImport,
  wrapForImport,
} from '../keyring/byok.js';
import { checkCertificateChain, pickVersion, signCsr } from '../keyring/certificates.js';
import { exportKey, selectVersions } from '../keyring/export-format.js';
import { formatGoTime } from '../keyring/go-time.js';
import { KEY_TYPES } from '../keyring/key-types.js';
import {
  checkAutoRotatePeriod,
  checkKeyName,
  cloneConfig,
  newKeyConfig,
  parseKeyType,
  validateCreate,
} from '../keyring/key-rules.js';
import { keyExists } from '../keyring/key-store.js';
import { HMAC_KEY_BYTES, LoadedVersion, publicPem } from '../keyring/material.js';
import type { KeyVersion, TransitKey } from '../keyring/types.js';

const route = routesFor<TransitEngine>();

const keyName = f.name('Name of the key');
const hashFunction = f
  .string('Hash for the RSA-OAEP step: SHA1, SHA224, SHA256 (default), SHA384, SHA512')
  .default('SHA256');

/** A new imported version from unwrapped material or a public key. */
function importedVersion(
  engine: TransitEngine,
  type: Parameters<typeof parseImportedMaterial>[0],
  n: number,
  input: { ciphertext?: Buffer; publicKey?: string; hash: string; wrapping: KeyObject; pq?: PqConfig },
): { version: LoadedVersion; keySize?: number } {
  const now = engine.keys.nowSeconds();
  if (input.ciphertext && KEY_TYPES[type].kind === 'pqc') {
    const m = pqFromImport({ type, ...input.pq! }, unwrapImport(input.wrapping, input.ciphertext, input.hash));
    return {
      version: new LoadedVersion({ version: n, creationTime: now, hmacKey: randomBytes(HMAC_KEY_BYTES), ...m }),
    };
  }
  if (input.ciphertext) {
    const m = parseImportedMaterial(type, unwrapImport(input.wrapping, input.ciphertext, input.hash));
    const hmacKey = KEY_TYPES[type].kind === 'hmac' ? m.key! : randomBytes(HMAC_KEY_BYTES);
    return {
      version: new LoadedVersion({
        version: n,
        creationTime: now,
        key: m.key,
        hmacKey,
        privateKey: m.privateKey,
        publicKey: m.publicKey,
        ed25519: type === 'ed25519',
      }),
      keySize: m.keySize,
    };
  }
  const pub = parseImportedPublicKey(type, input.publicKey!);
  return {
    version: new LoadedVersion({
      version: n,
      creationTime: now,
      hmacKey: randomBytes(HMAC_KEY_BYTES),
      publicKey: pub,
      ed25519: type === 'ed25519',
    }),
  };
}

/** Refusal for operations that would need a managed key's material, which never leaves the HSM/KMS. */
function refuseManaged(key: { type: string } | null | undefined, what: string): void {
  if (key?.type === 'managed_key')
    throw invalid(`${what} is not supported for keys of type managed_key: the key material stays in the HSM or KMS`);
}

/** `export/public-key` of a managed key: the public keys read from the HSM/KMS, per version. */
async function managedPublicExport(
  engine: TransitEngine,
  key: TransitKey,
  version?: string,
): Promise<Record<string, unknown>> {
  const want =
    version === undefined || version === '' ? null : version === 'latest' ? key.latestVersion : Number(version);
  if (want !== null && (!Number.isInteger(want) || want < 1 || want > key.latestVersion))
    throw invalid('version', 'invalid key version');
  const keys: Record<string, string> = {};
  for (let n = Math.max(1, key.minDecryptionVersion); n <= key.latestVersion; n++) {
    if (want !== null && n !== want) continue;
    const id = key.versions.get(n)?.managedKeyId;
    if (!id) continue;
    const pub = (await engine.managed!.key(id)).publicKey();
    if (!pub) throw invalid('export of public-key is not supported for a symmetric managed key');
    keys[String(n)] = publicPem(pub);
  }
  return { name: key.name, type: key.type, keys };
}

/** Routes: export, backup/restore, wrapping key, import, import_version, byok-export, csr, set-certificate. */
export const keyIoRoutes: AnyRoute[] = [
  route({
    path: 'export/:key_type/:name(/:version)',
    summary: 'Export key material (exportable keys) or public keys and certificate chains',
    fields: {
      key_type: f.string('encryption-key, signing-key, hmac-key, public-key or certificate-chain').required(),
      name: keyName,
      version: f.string('Version: a number, "latest", or omitted for all live versions'),
    },
    operations: {
      read: async ({ engine, data }) => {
        const key = await engine.keys.get(data.name);
        if (!key) return undefined;
        refuseSoftDeleted(key);
        if (key.type === 'managed_key') {
          if (data.key_type !== 'public-key') refuseManaged(key, `export of ${data.key_type}`);
          return { data: await managedPublicExport(engine, key, data.version) };
        }
        return { data: exportKey(key, data.key_type, data.version) };
      },
    },
    cli: {
      command: 'transit keys export',
      args: ['key_type', 'name', 'version'],
      examples: ['keyhold transit keys export encryption-key payments latest'],
    },
  }),
  route({
    path: 'backup/:name',
    summary: 'Plaintext backup of a key in Vault format (needs exportable and allow_plaintext_backup)',
    fields: { name: keyName },
    operations: {
      read: async ({ engine, data }) => {
        const { key } = await engine.keys.update(
          data.name,
          () => notFound(`key "${data.name}" not found`),
          (draft) => {
            refuseManaged(draft, 'backup');
            if (!draft.exportable) throw invalid('exportable', 'exporting is disallowed on the policy');
            if (!draft.allowPlaintextBackup)
              throw invalid('allow_plaintext_backup', 'plaintext backup is disallowed on the policy');
            draft.backupInfo = { time: formatGoTime(engine.keys.nowSeconds()), version: draft.latestVersion };
          },
        );
        return { data: { backup: encodeBackup(key) } };
      },
    },
    cli: {
      command: 'transit keys backup',
      args: ['name'],
      output: 'backup',
      examples: ['keyhold transit keys backup payments > payments.backup'],
    },
  }),
  route({
    path: 'restore(/:name)',
    summary: 'Restore a key from a backup (Vault format); refuses an existing name unless force',
    fields: {
      backup: f.string('Backup blob from backup/:name').required().sensitive(),
      name: f.string('Name of the restored key (default: the name in the backup)'),
      force: f.bool('Overwrite an existing key of that name').default(false),
    },
    operations: {
      update: async ({ engine, data }) => {
        if (data.name?.includes('/')) throw invalid('name', 'key names cannot be paths');
        const key = decodeBackup(data.backup, data.name || undefined);
        checkKeyName(key.name);
        key.restoreInfo = { time: formatGoTime(engine.keys.nowSeconds()), version: key.latestVersion };
        await engine.keys.withLock(key.name, 'exclusive', () => engine.keys.putWholeLocked(key, data.force, keyExists));
      },
    },
    cli: {
      command: 'transit keys restore',
      examples: ['keyhold transit keys restore --name payments < payments.backup'],
    },
  }),
  route({
    path: 'wrapping_key',
    summary: "The mount's RSA-4096 public wrapping key (PEM) for building import ciphertexts",
    fields: {},
    operations: { read: async ({ engine }) => ({ data: { public_key: await engine.wrapping.publicPem() } }) },
    cli: {
      command: 'transit keys wrapping-key',
      output: 'public_key',
      examples: ['keyhold transit keys wrapping-key --field public_key > wrap.pem'],
    },
  }),
  route({
    path: 'keys/:name/import',
    summary: 'Create a key from wrapped material (BYOK) or from a public key only',
    fields: {
      name: keyName,
      ciphertext: f
        .string('base64: RSA-OAEP-wrapped AES-256 key (first 512 bytes) + AES-KWP-wrapped key material')
        .sensitive(),
      public_key: f.string('PEM public key for a public-key-only import'),
      hash_function: hashFunction,
      type: f.string('Key type of the imported material').default('aes256-gcm96'),
      allow_rotation: f.bool('Allow rotating the imported key inside keyhold').default(false),
      derived: f.bool('Derive a key per request from a context').default(false),
      context: f.base64('Accepted for compatibility (unused)'),
      exportable: f.bool('Allow export (one-way)').default(false),
      allow_plaintext_backup: f.bool('Allow plaintext backup (one-way)').default(false),
      auto_rotate_period: f.duration('Auto-rotation period (needs allow_rotation)').default(0),
      convergent_encryption: f.bool('Refused: imported keys cannot be convergent'),
      parameter_set: f.string(
        'ml-dsa/hybrid: 44, 65 or 87; slh-dsa: its parameter set (ml-dsa imports the 32-byte seed)',
      ),
      hybrid_key_type_pqc: f.string('hybrid: ml-dsa'),
      hybrid_key_type_ec: f.string('hybrid: ecdsa-p256, ecdsa-p384, ecdsa-p521 or ed25519'),
    },
    rules: [{ kind: 'oneOf', fields: ['ciphertext', 'public_key'] }],
    operations: {
      update: async ({ engine, data }) => {
        checkKeyName(data.name);
        if (data.convergent_encryption !== undefined)
          throw invalid('convergent_encryption', 'import cannot be used on keys with convergent encryption enabled');
        const type = parseKeyType(data.type);
        if (type === 'managed_key')
          throw invalid(
            'type',
            'unable to import keys to a policy of type managed_key: the key material stays in the HSM or KMS',
          );
        checkAutoRotatePeriod(data.auto_rotate_period);
        if (data.auto_rotate_period !== 0 && !data.allow_rotation)
          throw invalid('allow_rotation', 'allow_rotation must be set to true if auto-rotation is enabled');
        const pq = parsePqConfig(type, {
          parameterSet: data.parameter_set,
          pqc: data.hybrid_key_type_pqc,
          ec: data.hybrid_key_type_ec,
        });
        validateCreate({ type, derived: data.derived, ...pq });
        if (KEY_TYPES[type].kind === 'hmac' && data.public_key && !data.ciphertext)
          throw invalid('public_key', 'provided type does not support public_key import');
        if (!data.ciphertext && type === 'ed25519' && data.derived) {
          throw invalid(
            'public_key',
            'unable to import only public key for derived Ed25519 key: imported key should not be an Ed25519 key pair but is instead an HKDF key',
          );
        }
        const ciphertext = data.ciphertext ? decodeBase64('ciphertext', data.ciphertext) : undefined;
        const hash = importHash(data.hash_function);
        const wrapping = await engine.wrapping.get();
        await engine.keys.withLock(data.name, 'exclusive', async () => {
          if (await engine.keys.get(data.name)) {
            throw invalid(
              'name',
              'the import path cannot be used with an existing key; use import-version to rotate an existing imported key',
            );
          }
          const { version, keySize } = importedVersion(engine, type, 1, {
            ciphertext,
            publicKey: data.public_key,
            hash,
            wrapping,
            pq,
          });
          const key = newKeyConfig(data.name, {
            type,
            derived: data.derived,
            exportable: data.exportable,
            allowPlaintextBackup: data.allow_plaintext_backup,
            autoRotatePeriod: data.auto_rotate_period,
            ...pq,
          });
          key.importedKey = true;
          key.allowImportedKeyRotation = data.allow_rotation;
          if (keySize) key.keySize = keySize;
          key.latestVersion = 1;
          key.versions.set(1, version);
          await engine.keys.putWholeLocked(key, false, keyExists);
        });
      },
    },
    cli: {
      command: 'transit import',
      args: ['name'],
      examples: ['keyhold transit import payments --file aes.key --type aes256-gcm96'],
    },
  }),
  route({
    path: 'keys/:name/import_version',
    summary: 'Import new material into an imported key (new version, or complete a public-only version)',
    fields: {
      name: keyName,
      ciphertext: f.string('base64 import ciphertext (see import)').sensitive(),
      public_key: f.string('PEM public key'),
      hash_function: hashFunction,
      version: f.int('Version to complete with its private key (default: a new version)'),
    },
    rules: [{ kind: 'oneOf', fields: ['ciphertext', 'public_key'] }],
    operations: {
      update: async ({ engine, data }) => {
        const ciphertext = data.ciphertext ? decodeBase64('ciphertext', data.ciphertext) : undefined;
        const hash = importHash(data.hash_function);
        const wrapping = ciphertext ? await engine.wrapping.get() : await Promise.resolve(undefined);
        await engine.keys.withLock(data.name, 'exclusive', async () => {
          const key = await engine.keys.get(data.name);
          if (!key)
            throw invalid('name', `no key found with name ${data.name}; to import a new key, use the import/ endpoint`);
          refuseSoftDeleted(key);
          if (!key.importedKey) {
            throw invalid(
              'name',
              'the import_version endpoint can only be used with an imported key that has not been rotated within keyhold',
            );
          }
          if (key.convergentEncryption)
            throw invalid('name', 'import_version cannot be used on keys with convergent encryption enabled');
          const info = KEY_TYPES[key.type];
          const pq = key.parameterSet ? { parameterSet: key.parameterSet, hybridEc: key.hybridEc } : undefined;
          const make = (n: number) =>
            importedVersion(engine, key.type, n, {
              ciphertext,
              publicKey: data.public_key,
              hash,
              wrapping: wrapping!,
              pq,
            });
          if (data.version !== undefined) {
            if (info.kind !== 'asymmetric')
              throw invalid('version', 'provided type does not support importing key versions');
            const existing = key.versions.get(data.version);
            if (!existing) throw invalid('version', 'no such key version');
            if (!ciphertext)
              throw invalid('public_key', 'cannot add a public key to a key version that already has a public key set');
            if (existing.privateKey) throw invalid('version', 'private key imported, key version cannot be updated');
            await engine.keys.putVersionLocked(key, completeVersion(existing, make(data.version).version));
            return;
          }
          const latest = key.versions.get(key.latestVersion);
          if (ciphertext && info.kind === 'asymmetric' && latest && !latest.privateKey) {
            const candidate = make(key.latestVersion).version;
            if (samePublic(candidate, latest)) {
              await engine.keys.putVersionLocked(key, completeVersion(latest, candidate));
              return;
            }
          }
          const { version, keySize } = make(key.latestVersion + 1);
          if (keySize && key.keySize !== keySize) {
            const draft = cloneConfig(key);
            draft.keySize = keySize;
            await engine.keys.writePolicy(draft);
            key.keySize = keySize;
          }
          await engine.keys.putVersionLocked(key, version);
        });
      },
    },
    cli: {
      command: 'transit import-version',
      args: ['name'],
      examples: ['keyhold transit import-version payments --file aes-v2.key'],
    },
  }),
  route({
    path: 'byok-export/:destination/:source(/:version)',
    summary: 'Export a key wrapped for another key (an RSA key, e.g. an imported wrapping key), in import format',
    fields: {
      destination: f.string('RSA key to wrap for').required(),
      source: f.string('Key to export').required(),
      version: f.string('Version: a number, "latest", or omitted for all'),
      hash: hashFunction,
    },
    operations: {
      read: async ({ engine, data }) => {
        const hash = importHash(data.hash, 'hash');
        const source = await engine.keys.get(data.source);
        if (!source) return undefined;
        refuseSoftDeleted(source);
        refuseManaged(source, 'BYOK export');
        if (!source.exportable) throw invalid('exportable', 'key is not exportable');
        const dest = await engine.keys.get(data.destination);
        if (!dest) throw invalid('destination', 'no such destination key to export to');
        if (!KEY_TYPES[dest.type].rsaBits)
          throw invalid('destination', 'failed to wrap source key: unsupported key type in use; must be a rsa key');
        const destVersion = dest.versions.get(dest.latestVersion);
        const destPub = destVersion?.publicKey;
        if (!destPub) throw invalid('destination', 'destination key has no public key');
        const keys: Record<string, string> = {};
        for (const v of selectVersions(source, data.version)) {
          const material = exportMaterial(source.type, v);
          if (!material)
            throw invalid('version', `version ${v.version} of ${source.name} has no private key material to export`);
          keys[String(v.version)] = wrapForImport(destPub, material, hash).toString('base64');
        }
        return { data: { name: source.name, type: source.type, keys } };
      },
    },
    cli: {
      command: 'transit keys byok-export',
      args: ['destination', 'source', 'version'],
      examples: ['keyhold transit keys byok-export their-wrapping-key payments latest'],
    },
  }),
  route({
    path: 'keys/:name/csr',
    summary: 'A PKCS#10 certificate request signed by the key (optional PEM template)',
    fields: {
      name: keyName,
      version: f.string('Key version: a number or "latest" (default)'),
      csr: f.string('PEM CSR template whose subject and extensions are kept'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const key = await engine.keys.get(data.name);
        if (!key) throw invalid('name', `key with provided name '${data.name}' not found`);
        refuseSoftDeleted(key);
        refuseManaged(key, 'CSR signing');
        const csr = signCsr(key, pickVersion(key, data.version), data.csr);
        return { data: { name: key.name, type: key.type, csr } };
      },
    },
    cli: {
      command: 'transit keys csr',
      args: ['name'],
      output: 'csr',
      examples: ['keyhold transit keys csr signer --field csr > signer.csr'],
    },
  }),
  route({
    path: 'keys/:name/set-certificate',
    summary: 'Attach a certificate chain (leaf first; the leaf must carry this key version)',
    fields: {
      name: keyName,
      version: f.string('Key version: a number or "latest" (default)'),
      certificate_chain: f.string('PEM certificates, leaf first').required(),
    },
    operations: {
      update: async ({ engine, data }) => {
        await engine.keys.withLock(data.name, 'exclusive', async () => {
          const key = await engine.keys.get(data.name);
          if (!key) throw invalid('name', `key with provided name '${data.name}' not found`);
          refuseSoftDeleted(key);
          refuseManaged(key, 'set-certificate');
          const v = pickVersion(key, data.version);
          const chain = checkCertificateChain(key, v, data.certificate_chain);
          v.certificateChain = chain;
          await engine.keys.putVersionLocked(key, v);
        });
      },
    },
    cli: {
      command: 'transit keys set-certificate',
      args: ['name'],
      examples: ['keyhold transit keys set-certificate signer --certificate-chain @chain.pem'],
    },
  }),
];

function samePublic(a: LoadedVersion, b: { publicKey?: KeyObject }): boolean {
  if (!a.publicKey || !b.publicKey) return false;
  return Buffer.from(a.publicKey.export({ format: 'der', type: 'spki' })).equals(
    Buffer.from(b.publicKey.export({ format: 'der', type: 'spki' })),
  );
}

/** Fill a public-only version with matching private material (keeps its number, time and HMAC key). */
function completeVersion(existing: KeyVersion, incoming: LoadedVersion): LoadedVersion {
  if (!samePublic(incoming, existing)) throw invalid('ciphertext', 'cannot import key, key pair does not match');
  return new LoadedVersion({
    version: existing.version,
    creationTime: existing.creationTime,
    hmacKey: existing.hmacKey,
    key: incoming.key,
    privateKey: incoming.privateKey,
    publicKey: incoming.publicKey ?? (incoming.privateKey ? createPublicKey(incoming.privateKey) : undefined),
    certificateChain: existing.certificateChain,
    ed25519: incoming.key?.length === 64,
  });
}
