/**
 * `sys/managed-keys` (reference managed-keys-wire.md 1.1-1.7): list per type, create/update, read
 * (secrets "redacted", id as `UUID`), delete (refused while in use) and `test/sign`. The registry
 * (src/kms/managed-keys.ts) does the work; these handlers only read fields and shape replies.
 */
import { f } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { KmsHash } from '../../framework/kms-key.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

const TEST_HASHES: Record<string, KmsHash> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};

/** Fields of a managed key write (both types; each type reads its own). Booleans accept "true" and true. */
const keyFields = {
  type: f.name('Backend type: pkcs11 or awskms'),
  name: f.name('Managed key name (unique across types)'),
  allow_generate_key: f.any('Generate the key in the backend when none is found (default false)'),
  allow_replace_key: f.any('Accepted; keyhold never replaces an existing key by itself (default false)'),
  allow_store_key: f.any('Accepted for compatibility (default false)'),
  any_mount: f.any('Any mount may use the key; otherwise mounts opt in with allowed_managed_keys (default false)'),
  usages: f.any('Comma-separated or list: encrypt, decrypt, sign, verify, wrap, unwrap, mac, generate_random'),
  library: f.string('pkcs11: name of a kms_library stanza of the server config'),
  slot: f.any('pkcs11: decimal slot id (slot or token_label)'),
  token_label: f.string('pkcs11: token label (slot or token_label)'),
  pin: f.string('pkcs11: user PIN (stored behind the barrier, read back as "redacted")').sensitive(),
  key_label: f.string('pkcs11: CKA_LABEL of the key (key_label or key_id)'),
  key_id: f.string('pkcs11: CKA_ID of the key, 0x-prefixed hex or text'),
  mechanism: f.any(
    'pkcs11: 0x0001 (RSA PKCS#1), 0x000D (RSA PSS), 0x0009 (RSA OAEP), 0x1041 (ECDSA), 0x1087 (AES-GCM), or a CKM name',
  ),
  key_bits: f.any('RSA modulus bits when generating: 2048, 3072, 4096'),
  curve: f.string('EC curve when generating: P256, P384, P521'),
  force_rw_session: f.any('pkcs11: open read-write sessions (default false)'),
  max_parallel: f.any('pkcs11: operations of this key in flight at once (default 1)'),
  rsa_oaep_hash: f.string('pkcs11: OAEP hash for RSA-OAEP keys (default sha256; SoftHSM2 supports only sha1)'),
  access_key: f.string('awskms: AWS access key id (read back as "redacted")').sensitive(),
  secret_key: f.string('awskms: AWS secret access key (read back as "redacted")').sensitive(),
  region: f.string('awskms: region (default us-east-1)'),
  endpoint: f.string('awskms: custom endpoint URL'),
  kms_key: f.string('awskms: key id, ARN or alias/... (an alias when allow_generate_key)'),
  key_type: f.string('awskms: RSA, ECDSA or AES (keyhold extension: symmetric encrypt/decrypt)'),
  disable_strict_networking: f.any('awskms: turn off the network guard (default false)'),
  allowed_ipv4_addresses: f.any('awskms: CIDRs the guard lets through (e.g. 127.0.0.1/32 for a local endpoint)'),
  allowed_ipv6_addresses: f.any('awskms: IPv6 CIDRs the guard lets through'),
  allowed_ports: f.any('awskms: ports besides 80 and 443'),
  uuid: f.string('Ignored (Terraform sends an empty uuid)'),
};

/** Routes of sys/managed-keys. */
export const managedKeyRoutes: AnyRoute[] = [
  route({
    path: 'managed-keys/:type',
    summary: 'List the managed keys of one backend type',
    fields: { type: f.name('Backend type: pkcs11 or awskms') },
    operations: { list: async ({ engine, data }) => ({ data: { keys: await engine.managedKeys.list(data.type) } }) },
    cli: { command: 'managed-keys list', args: ['type'] },
  }),
  route({
    path: 'managed-keys/:type/:name/test/sign',
    summary: 'Sign random data with a managed key and verify the signature (may generate the key)',
    fields: {
      type: f.name('Backend type'),
      name: f.name('Managed key name'),
      use_pss: f.bool('RSA: sign with PSS instead of PKCS#1 v1.5').default(false),
      hash_algorithm: f.string('sha2-256 (default), sha2-224/384/512, sha3-*, sha1').default('sha2-256'),
    },
    operations: {
      update: async ({ engine, data }) => {
        const hash = TEST_HASHES[data.hash_algorithm];
        if (!hash) throw invalid('hash_algorithm', `unsupported hash algorithm "${data.hash_algorithm}"`);
        await engine.managedKeys.testSign(data.type, data.name, { usePss: data.use_pss, hash });
      },
    },
    cli: { command: 'managed-keys test-sign', args: ['type', 'name'] },
  }),
  route({
    path: 'managed-keys/:type/:name',
    summary: 'Create, update, read or delete a managed key (PKCS#11 token key or AWS KMS key)',
    fields: keyFields,
    operations: {
      read: async ({ engine, data }) => ({
        data: engine.managedKeys.view(await engine.managedKeys.get(data.type, data.name)),
      }),
      update: async ({ engine, data, raw }) => {
        const { type: _t, name: _n, uuid: _u, ...rest } = raw as Record<string, unknown>;
        void data;
        await engine.managedKeys.write(data.type, data.name, rest);
      },
      delete: async ({ engine, data }) => {
        await engine.managedKeys.delete(data.type, data.name);
      },
    },
    cli: { command: 'managed-keys create', args: ['type', 'name'], operation: 'update' },
  }),
];
